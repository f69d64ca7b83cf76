"""REDUCE redoes only the chunks a change touches, from the ledger it keeps: after every kind of
edit, in a seeded sequence, the KB is exactly what a compile from scratch of the same documents
gives, and the recompile redid fewer chunks than the KB has."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from compendium.operations import compile_workspace
from compendium.settings import load_settings
from compendium.workspace import init_workspace

from .test_one_path import _kb

NAMES = ["Buffer Pool", "Storage Engine", "Redo Journal", "Archive Daemon", "Clock Sweep Policy",
         "Zephyr Gateway", "Orion Team", "Write-Ahead Log (WAL)", "Vacuum Worker", "Index Builder"]
TERMS = {
    "checkpoint": "A checkpoint is a point in the journal where every dirty page has been written.",
    "tablespace": "A tablespace is a directory where the Storage Engine keeps its files.",
    "segment": "A segment is a fixed-size file of the Redo Journal.",
    "latch": "A latch is a short lock that guards one page in memory.",
}
PLAIN = ["The {a} waits for the {t} before it hands work to the {b}.",
         "Every {t} is counted by the {a} and reported to the {b}.",
         "The {a} uses the {b} during each {t}.",
         "Exception handling in the {a} logs every exception raised by the {b}.",
         "The {a} writes to the WAL before the {b} replies."]


def _sentence(rng: random.Random) -> str:
    a, b = rng.sample([n.split(" (")[0] for n in NAMES], 2)
    return rng.choice(PLAIN).format(a=a, b=b, t=rng.choice(sorted(TERMS)))


def _document(rng: random.Random, title: str, define: list[str]) -> str:
    parts = [f"# {title}\n"]
    for n in range(rng.randint(1, 3)):
        body = [TERMS[t] for t in define if n == 0] + [_sentence(rng) for _ in range(rng.randint(2, 5))]
        parts.append(f"## Part {n + 1}\n\n" + " ".join(body) + "\n")
    return "\n".join(parts)


def _edit(rng: random.Random, folder: Path, step: int) -> str:
    files = sorted(folder.glob("*.md"))
    kind = ["append", "delete", "add", "rename", "undefine", "append"][step % 6]
    if kind == "append" or (kind == "delete" and len(files) < 4):
        f = rng.choice(files)
        f.write_text(f.read_text(encoding="utf-8") + "\n" + _sentence(rng) + "\n", encoding="utf-8")
    elif kind == "delete":
        rng.choice(files).unlink()
    elif kind == "add":
        (folder / f"added{step}.md").write_text(
            _document(rng, rng.choice(NAMES), [rng.choice(sorted(TERMS))]), encoding="utf-8")
    elif kind == "rename":  # an entity's name changes in one document: its mentions move clusters
        f = rng.choice(files)
        text = f.read_text(encoding="utf-8")
        f.write_text(text.replace("Buffer Pool", "Buffer Cache").replace("Archive Daemon", "Archiver"), encoding="utf-8")
    else:  # a definition disappears: a term may stop being one
        for f in files:
            text = f.read_text(encoding="utf-8")
            for definition in TERMS.values():
                if definition in text:
                    f.write_text(text.replace(definition, ""), encoding="utf-8")
                    return kind
    return kind


async def _compile(workspace: Path) -> dict[str, Any]:
    report = (await compile_workspace(load_settings(workspace, env={}))).as_dict()
    assert report["status"] == "succeeded", report["error"]
    return report


def _redone(report: dict[str, Any]) -> int:
    return int(report["phases"]["reduce"].get("chunks_redone", -1))


@pytest.mark.parametrize("seed", [11, 12, 13])
async def test_every_kind_of_edit_ends_where_a_compile_from_scratch_does(tmp_path: Path, seed: int):
    rng = random.Random(seed)
    grown = init_workspace(tmp_path / "grown")
    folder = grown / "documents" / "kb"
    folder.mkdir(parents=True)
    for n in range(8):
        (folder / f"doc{n}.md").write_text(_document(rng, NAMES[n % len(NAMES)], sorted(TERMS)[n % 4 : n % 4 + 1]),
                                           encoding="utf-8")
    first = await _compile(grown)
    assert _redone(first) == first["chunks"]
    partial = 0
    for step in range(12):
        kind = _edit(rng, folder, step)
        report = await _compile(grown)
        partial += 0 <= _redone(report) < report["chunks"]
        print(step, kind, _redone(report), report["chunks"])
        fresh = init_workspace(tmp_path / f"fresh{step}")
        shutil.copytree(folder, fresh / "documents" / "kb")
        await _compile(fresh)
        assert await _kb(grown, {}) == await _kb(fresh, {}), f"step {step}: {kind}"
    assert partial >= 8  # the edits were worked out from the ledger, not by redoing every chunk
