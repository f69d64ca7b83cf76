"""`compendium templates validate` refuses hostile files fast, in one line naming file and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compendium.cli import main
from tests.api.test_hostile_templates import LOOP_BOMB
from tests.templates.test_hostile_yaml import ALIAS_BOMB

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "says"), [
    (ALIAS_BOMB, "bomb.yaml:1: YAML anchors (&a) are not allowed"),
    ("name: x\ndescription: a\u0002b\n", "bomb.yaml:2: control character U+0002"),
    (LOOP_BOMB, "bomb.yaml:3: map.prompt: unsafe prompt"),
    ("name: x\nrefine:\n  writer_prompt: '{{ lipsum(99999) }}'\n", "lipsum() writes at most"),
    ("name: x\nentity_types:\n  - name: a\n    patterns: ['x(?=y)']\n",
     "bomb.yaml:4: entity_types[0].patterns[0]: not a valid regular expression for RE2"),
])
def test_hostile_files_are_refused_within_2_s_in_one_line(tmp_path, capsys, text, says):
    path = tmp_path / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    code = main(["templates", "validate", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_the_command_itself_exits_with_the_error(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "compendium.cli", "templates", "validate", str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "bomb.yaml:1: YAML anchors (&a) are not allowed" in done.stderr
