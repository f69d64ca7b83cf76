"""A sentence the manual writes word for word in many documents ("Mandatory arguments to long
options are mandatory for short options too.", under every command) is furniture: no page says
it. When a document goes and it is written in fewer documents than that, the other pages say it
again, exactly as a compile from scratch of what is left writes them (offline engine, SQLite)."""

from __future__ import annotations

import shutil
from pathlib import Path

from compendium.operations import opened_store
from compendium.phases.claim_index import REPEATED_IN
from compendium.settings import load_settings
from compendium.storage.records import Page
from compendium.workspace import init_workspace

from .test_one_path import _compile_offline

FURNITURE = "Mandatory arguments to long options are mandatory for short options too."
COMMANDS = ["crate-pack", "crate-seal", "crate-ship", "crate-sort", "crate-weigh", "crate-stack"][: REPEATED_IN + 1]
PURPOSES = ["pack widgets into crates", "seal a packed crate", "ship sealed crates to the depot",
            "sort crates by their destination", "weigh a crate before shipping", "stack crates on a pallet"]


def _manual(root: Path, commands: list[str]) -> Path:
    workspace = init_workspace(root)
    folder = workspace / "documents" / "manual"
    folder.mkdir(parents=True)
    for command in commands:
        purpose = PURPOSES[COMMANDS.index(command)]
        (folder / f"{command}.md").write_text(
            f"# {command}\n\n## NAME\n\n{command} - {purpose}\n\n## DESCRIPTION\n\n"
            f"{command} reads its settings from the crate file. {FURNITURE} "
            f"In verbose mode {command} prints each crate it handles.\n",
            encoding="utf-8")
    return workspace


async def _pages(workspace: Path) -> dict[str, str]:
    async with opened_store(load_settings(workspace, env={})) as store:
        return {p.slug: p.markdown async for p in store.scan(Page, {"status": "active"})}


async def test_a_sentence_written_in_many_documents_is_on_no_page_until_fewer_write_it(tmp_path: Path):
    workspace = _manual(tmp_path / "manual", COMMANDS[:REPEATED_IN])
    await _compile_offline(workspace)
    pages = await _pages(workspace)
    command_pages = {slug: text for slug, text in pages.items() if slug.startswith("crate-")}
    assert len(command_pages) == REPEATED_IN
    assert all("reads its settings from the crate file" in t for t in command_pages.values())
    assert not [slug for slug, text in pages.items() if FURNITURE in text]

    # One document goes: the sentence is each remaining command's own again.
    (workspace / "documents" / "manual" / f"{COMMANDS[0]}.md").unlink()
    await _compile_offline(workspace)
    after = await _pages(workspace)
    saying = sorted(slug for slug, text in after.items() if FURNITURE in text)
    assert len(saying) == REPEATED_IN - 1

    fresh = _manual(tmp_path / "fresh", COMMANDS[1:REPEATED_IN])
    await _compile_offline(fresh)
    assert after == await _pages(fresh)

    # Two documents come: it is furniture again, on the pages kept from before as well.
    for command in (COMMANDS[0], COMMANDS[REPEATED_IN]):
        shutil.copyfile(tmp_path / "manual" / "documents" / "manual" / f"{COMMANDS[1]}.md",
                        workspace / "documents" / "manual" / f"{command}.md")
        path = workspace / "documents" / "manual" / f"{command}.md"
        path.write_text(path.read_text(encoding="utf-8").replace(COMMANDS[1], command)
                        .replace(PURPOSES[1], PURPOSES[COMMANDS.index(command)]), encoding="utf-8")
    await _compile_offline(workspace)
    assert not [slug for slug, text in (await _pages(workspace)).items() if FURNITURE in text]
