"""The command line as a person meets it: --version, help in their words, readable status,
errors that name the path, a warning for an empty compile, and quiet when its reader leaves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compendium import __version__
from compendium.cli import CLOSED_PIPE, main
from tests.support.workspace_fixtures import SAMPLE_CORPUS


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    for name in ("COMPENDIUM_STORE", "COMPENDIUM_LLM_BASE_URL", "COMPENDIUM_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def compiled(tmp_path, capsys) -> Path:
    ws = tmp_path / "ws"
    assert main(["init", str(ws)]) == 0
    shutil.copytree(SAMPLE_CORPUS / "storage", ws / "documents" / "storage")
    assert main(["-w", str(ws), "compile", "--plain"]) == 0
    capsys.readouterr()
    return ws


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"compendium {__version__}"


def test_top_level_help_is_written_for_users(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "parses arguments" not in out  # not the module's docstring
    assert "Start here:" in out and "compendium init" in out and "compendium serve" in out
    for command in ("init", "add", "compile", "status", "export", "serve", "keys"):
        assert f"\n    {command} " in out


def test_status_reads_as_sentences_with_local_times_and_counts(compiled, capsys):
    code, out, _ = run(capsys, "-w", str(compiled), "status")
    assert code == 0
    lines = dict(line.split(":", 1) for line in out.splitlines() if ":" in line and not line.startswith(" "))
    assert int(lines["Documents"].split()[0]) == len([p for p in (compiled / "documents").rglob("*") if p.is_file()])
    assert "pages" in lines["Compiled"] and "entities" in lines["Compiled"]
    last = lines["Last compile"].strip()
    assert last.startswith("succeeded at ") and "template wiki" in last
    finished = json.loads(run(capsys, "-w", str(compiled), "status", "--json")[1])["last_compile"]["finished_at"]
    assert time.strftime("%Y-%m-%d %H:%M", time.localtime(finished)) in last  # local time, not epoch
    assert "{" not in out and str(int(finished)) not in out
    assert "created" in out and "unchanged" in out  # what the last compile did to the pages


def test_status_json_is_for_machines(compiled, capsys):
    code, out, _ = run(capsys, "-w", str(compiled), "status", "--json")
    data = json.loads(out)
    assert code == 0 and data["counts"]["pages"] > 0 and data["last_compile"]["status"] == "succeeded"


def test_a_missing_workspace_is_named(tmp_path, capsys):
    missing = tmp_path / "nonexistent"
    for argv in (["-w", str(missing), "status"], ["-w", str(missing), "compile"], ["-w", str(missing), "serve"]):
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        assert str(missing) in err and "no such folder" in err and "Traceback" not in err


def test_an_unwritable_report_file_is_named(compiled, capsys):
    target = compiled / "no-such-folder" / "report.json"
    code, _, err = run(capsys, "-w", str(compiled), "compile", "--plain", "--report", str(target))
    assert code == 2 and str(target) in err and "Traceback" not in err


def test_compiling_no_documents_warns(tmp_path, capsys):
    ws = tmp_path / "empty"
    assert main(["init", str(ws)]) == 0
    code, out, err = run(capsys, "-w", str(ws), "compile", "--plain")
    assert code == 0
    assert "warning: no documents to compile" in err
    assert f"{ws / 'documents'} holds no documents" in err  # where it looked
    assert "compendium -w" in err and "add PATH" in err  # and what to do
    assert "Export the wiki" not in out


def test_a_closed_pipe_ends_quietly(compiled):
    """`compendium changes --all | head -1`: the reader leaves; no BrokenPipeError traceback."""
    env = {**os.environ, "PYTHONUNBUFFERED": "0"}
    for argv in (["changes", "--all"], ["status"]):
        process = subprocess.Popen(
            [sys.executable, "-m", "compendium.cli", "-w", str(compiled), *argv],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        process.stdout.close()  # the reader is gone before the first line is written
        err = process.stderr.read().decode()
        process.stderr.close()
        assert process.wait(timeout=60) == CLOSED_PIPE, err
        assert "Traceback" not in err and "BrokenPipe" not in err
