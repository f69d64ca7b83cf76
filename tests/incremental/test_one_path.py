"""One compile path: a recompile ends where a compile from scratch of the same documents does,
and one with nothing changed skips every phase on fingerprints alone."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.corpus import generate_corpus
from compendium.operations import compile_workspace, opened_store
from compendium.outline import OutlineNode
from compendium.outline.stored import stored_outline
from compendium.phases.map import extracts_fingerprint
from compendium.pipeline.stages import stage_mark
from compendium.settings import load_settings
from compendium.storage.records import (
    CacheEntry,
    Chunk,
    Claim,
    Entity,
    Extract,
    Page,
    Relation,
    Topic,
)
from compendium.templates.registry import show_template
from compendium.templates.render import default_prompt
from compendium.workspace import init_workspace
from tests.support.llm_server import REFUSAL, LLMServer
from tests.support.outputs import canonical_records

from .corpus import DOCUMENTS, compile_, env_for, make_workspace

NEW_SENTENCE = "The Buffer Pool prefetches neighbouring pages during a sequential scan."
MORE = {
    "archive.md": "# Archive Daemon\n\n## Duties\n\nThe Archive Daemon compresses old segments. "
                  "The Archive Daemon copies segments to cold storage every night.\n",
}


async def _compile_offline(workspace: Path) -> dict[str, Any]:
    report = (await compile_workspace(load_settings(workspace, env={}))).as_dict()
    assert report["status"] == "succeeded", report["error"]
    return report


async def _kb(workspace: Path, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The canonical KB as records, without what depends on when it was written."""
    async with opened_store(load_settings(workspace, env=env)) as store:
        return await canonical_records(store, (Chunk, Extract, Entity, Relation, Claim))


def _edit(folder: Path) -> None:
    buffer = folder / "buffer.md"
    buffer.write_text(buffer.read_text(encoding="utf-8").replace(
        "Clock Sweep Policy. ", f"Clock Sweep Policy. {NEW_SENTENCE} ", 1), encoding="utf-8")
    (folder / "gateway.md").unlink()
    for name, text in MORE.items():
        (folder / name).write_text(text, encoding="utf-8")


async def test_an_edited_kb_ends_where_a_compile_from_scratch_of_its_documents_does(tmp_path: Path):
    grown = make_workspace(tmp_path / "grown")
    await _compile_offline(grown)
    _edit(grown / "documents" / "kb")
    await _compile_offline(grown)

    fresh = init_workspace(tmp_path / "fresh")
    shutil.copytree(grown / "documents" / "kb", fresh / "documents" / "kb")
    await _compile_offline(fresh)

    assert await _kb(grown, {}) == await _kb(fresh, {})
    # What MAP handed REDUCE, brought up to date from the changed documents alone, names
    # exactly the extracts stored (REDUCE trusts it instead of reading them).
    for workspace in (grown, fresh):
        async with opened_store(load_settings(workspace, env={})) as store:
            handed = (await stage_mark(store, "map"))["output"]
            stored = [(e.id, e.fingerprint) async for e in store.scan(Extract)]
        assert handed == extracts_fingerprint(stored)


async def test_nothing_changed_skips_every_phase_on_fingerprints(tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    first = await _compile_offline(workspace)
    again = await _compile_offline(workspace)
    phases = again["phases"]
    assert phases["map"]["skipped"] == phases["map"]["items"] == first["chunks"]
    assert phases["map"]["batches"] == 0
    assert phases["reduce"]["done"] == 0 and phases["plan"]["done"] == 0
    assert phases["plan"]["candidates"] == 0  # not even planned again
    assert again["pages"]["unchanged"] == sum(first["pages"].values()) - first["pages"]["deleted"]
    assert again["counts"] == first["counts"]


async def test_new_outline_rules_rebuild_the_outline_of_a_kb_nothing_else_changed_in(tmp_path: Path, monkeypatch):
    """An upgrade whose outline rules changed (OUTLINE_VERSION) applies them on the next compile,
    though no document, template or model changed; only pages whose evidence moved are rewritten."""
    from compendium.outline import stored

    workspace = make_workspace(tmp_path / "ws")
    first = await _compile_offline(workspace)
    async with opened_store(load_settings(workspace, env={})) as store:
        built = (await stored_outline(store))["inputs"]
    monkeypatch.setattr(stored, "OUTLINE_VERSION", stored.OUTLINE_VERSION + 1)
    again = await _compile_offline(workspace)
    assert again["phases"]["plan"]["candidates"] > 0  # planned again, not skipped on the fingerprint
    assert again["phases"]["map"]["batches"] == 0 and again["phases"]["reduce"]["done"] == 0
    assert again["counts"] == first["counts"]
    async with opened_store(load_settings(workspace, env={})) as store:
        assert (await stored_outline(store))["inputs"] != built  # built again, under the new rules
    settled = await _compile_offline(workspace)
    assert settled["phases"]["plan"]["candidates"] == 0


async def test_inputs_that_come_back_after_a_half_finished_run_are_worked_again(llm_server: LLMServer, tmp_path: Path):
    """An edit whose extraction failed, then undone: the documents are those of the first
    compile again, but the store is not, so no phase may trust its old mark."""
    workspace = make_workspace(tmp_path / "ws")
    await compile_(workspace, llm_server)
    before = await _kb(workspace, env_for(llm_server))
    path = workspace / "documents" / "kb" / "buffer.md"
    path.write_text(DOCUMENTS["buffer.md"].replace("Clock Sweep Policy. ", f"Clock Sweep Policy. {NEW_SENTENCE} ", 1),
                    encoding="utf-8")
    default = llm_server.responder
    llm_server.responder = lambda request: REFUSAL if request.schema_name == "extraction" else default(request)
    try:
        half = (await compile_workspace(load_settings(workspace, env=env_for(llm_server)))).as_dict()
    finally:
        llm_server.responder = default
    assert half["phases"]["map"]["failed"] >= 1

    path.write_text(DOCUMENTS["buffer.md"], encoding="utf-8")
    report = await compile_(workspace, llm_server)

    assert report["phases"]["map"]["done"] >= 1  # the first version's chunk is extracted again
    assert await _kb(workspace, env_for(llm_server)) == before


async def test_a_file_rewritten_at_once_with_the_same_size_is_read_again(tmp_path: Path):
    """Files are re-read only when their size or time changed; one written within the clock
    tick it was hashed in keeps its time, so a fresh file is always hashed again."""
    workspace = make_workspace(tmp_path / "ws")
    await _compile_offline(workspace)
    path = workspace / "documents" / "kb" / "buffer.md"
    before = path.read_text(encoding="utf-8")
    after = before.replace("quarter of memory", "third of the disk", 1)
    assert len(after) == len(before) and after != before
    stat = path.stat()
    path.write_text(after, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same time

    report = await _compile_offline(workspace)

    assert report["phases"]["ingest"]["changed_documents"] == 1
    chunks = (await _kb(workspace, {}))["Chunk"].values()
    assert any("third of the disk" in c["text"] for c in chunks)


def _outline_template(workspace: Path, writer_note: str = "") -> None:
    """The built-in `wiki` template as a workspace copy that asks for the outline, its writer's
    prompt ending with `writer_note`."""
    data = yaml.safe_load(show_template("wiki"))
    data["artifacts"] = list(dict.fromkeys([*data["artifacts"], "outline"]))
    if writer_note:
        data.setdefault("refine", {})["writer_prompt"] = default_prompt("page") + writer_note
    (workspace / "templates" / "wiki.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


async def _stored_outline(workspace: Path) -> dict[str, Any] | None:
    async with opened_store(load_settings(workspace, env={})) as store:
        return await stored_outline(store)


async def test_the_outline_is_built_again_only_when_its_inputs_change(tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    _outline_template(workspace)
    first = await _compile_offline(workspace)
    assert first["phases"]["plan"]["outline_nodes"] > 0 and first["phases"]["plan"]["outline_reused"] == 0
    built = await _stored_outline(workspace)

    again = await _compile_offline(workspace)  # nothing changed: not even planned
    assert again["phases"]["plan"]["candidates"] == 0 and "outline_reused" not in again["phases"]["plan"]

    # The writer's prompt changed: PLAN runs again, but nothing the outline is built from did.
    _outline_template(workspace, "\nPrefer short paragraphs.")
    rewritten = await _compile_offline(workspace)
    assert rewritten["phases"]["plan"]["candidates"] > 0
    assert rewritten["phases"]["plan"]["outline_reused"] == 1
    assert await _stored_outline(workspace) == built

    # A new document is: the outline is built again, and places its pages.
    for name, text in MORE.items():
        (workspace / "documents" / "kb" / name).write_text(text, encoding="utf-8")
    grown = await _compile_offline(workspace)
    assert grown["phases"]["plan"]["outline_reused"] == 0
    after = await _stored_outline(workspace)
    assert after is not None and after["inputs"] != built["inputs"]
    listed = {s for root in after["roots"] for node, _d in OutlineNode.from_dict(root).walk() for s in node.subjects}
    assert set(after["page_of"]) - {n.id for r in after["roots"] for n, _d in OutlineNode.from_dict(r).walk()} <= listed


# One path on a generated corpus: each kind of change on its own (one document edited, one
# added, one deleted) ends where a compile from scratch of the documents it leaves ends.
CORPUS = 100
CHANGES = ("edit", "add", "delete")
EDITED_SENTENCE = " An operator can inspect it with the status command at any time."


def _corpus(folder: Path, spare: Path) -> Path:
    """CORPUS generated documents in `folder`, and one more (the one an "add" adds) in `spare`."""
    generate_corpus(spare, CORPUS + 1)
    folder.mkdir(parents=True)
    files = sorted(spare.iterdir())
    for f in files[:CORPUS]:
        shutil.move(str(f), folder / f.name)
    return files[CORPUS]


def _change(kind: str, folder: Path, extra: Path) -> None:
    files = sorted(folder.iterdir())
    if kind == "edit":  # one sentence more in the second paragraph of prose of one document
        path = files[len(files) // 3]
        paragraphs = path.read_text(encoding="utf-8").split("\n\n")
        prose = [i for i, p in enumerate(paragraphs) if p and not p.startswith("#")]
        paragraphs[prose[1]] += EDITED_SENTENCE
        path.write_text("\n\n".join(paragraphs), encoding="utf-8")
    elif kind == "add":
        shutil.copy(extra, folder / extra.name)
    else:
        files[len(files) // 2].unlink()


async def _outputs(workspace: Path, env: dict[str, str]) -> dict[str, Any]:
    """Subjects, topics, the outline, the page plans and the live pages, without what depends on
    when or how often they were written (times, versions, a plan's action) or on vectors."""
    async with opened_store(load_settings(workspace, env=env)) as store:
        kb = await canonical_records(store, (Entity, Topic))
        pages = {}
        async for page in store.scan(Page):
            if page.status == "active":  # type: ignore[attr-defined]
                data = page.to_dict()
                for key in ("embedding", "version", "created_at", "updated_at", "pending_update"):
                    data.pop(key, None)
                pages[page.id] = data
        outline = await stored_outline(store)
        stored = await store.get(CacheEntry, ["plan:wiki"])
    plans, actions = {}, {}
    for entry in stored[0].value:  # type: ignore[attr-defined]
        if entry["action"] != "DELETE":
            actions[entry["slug"]] = entry.pop("action")
            for how in ("reason", "moved_from"):  # how the recompile got there
                entry.pop(how, None)
            plans[entry["slug"]] = entry
    return {"subjects": kb["Entity"], "topics": kb["Topic"], "outline": outline, "plans": plans, "pages": pages,
            "actions": actions}


# What a page merged into by an update (the model's writer answers with the new sentences only,
# inserted into the page as it was) may say differently from a page written whole from the same
# evidence: its arrangement, and the evidence it already cited when the budget is full.
MERGED_MAY_DIFFER = ("markdown", "cited_chunks", "outlinks", "summary")


def _differences(grown: dict[str, Any], fresh: dict[str, Any], *, merged: bool = False) -> dict[str, Any]:
    """Per part, the ids whose records differ (only in one, or in both but unequal). `merged`:
    pages the recompile merged into (action UPDATE) are compared without MERGED_MAY_DIFFER."""
    out: dict[str, Any] = {}
    for part in ("subjects", "topics", "plans", "pages"):
        a, b = grown[part], fresh[part]
        ids = sorted(i for i in set(a) | set(b) if a.get(i) != b.get(i))
        if part == "pages" and merged:
            updated = {slug for slug, action in grown["actions"].items() if action == "UPDATE"}
            ids = [i for i in ids if i not in updated or i not in a or i not in b
                   or {k: v for k, v in a[i].items() if k not in MERGED_MAY_DIFFER}
                   != {k: v for k, v in b[i].items() if k not in MERGED_MAY_DIFFER}]
        if ids:
            out[part] = {i: {k: (a.get(i, {}).get(k), b.get(i, {}).get(k))
                             for k in sorted(set(a.get(i, {})) | set(b.get(i, {})))
                             if a.get(i, {}).get(k) != b.get(i, {}).get(k)} for i in ids}
    if grown["outline"] != fresh["outline"]:
        out["outline"] = True
    return out


async def _one_path(tmp_path: Path, env: dict[str, str], *, merged: bool = False) -> dict[str, dict[str, Any]]:
    """For each change, what the recompiled KB has that a fresh compile of its documents has not."""
    base = init_workspace(tmp_path / "base")
    _outline_template(base)
    extra = _corpus(base / "documents" / "syn", tmp_path / "spare")
    first = (await compile_workspace(load_settings(base, env=env))).as_dict()
    assert first["status"] == "succeeded", first["error"]
    found: dict[str, dict[str, Any]] = {}
    for kind in CHANGES:
        grown = tmp_path / kind
        shutil.copytree(base, grown)
        _change(kind, grown / "documents" / "syn", extra)
        fresh = init_workspace(tmp_path / f"{kind}-fresh")
        _outline_template(fresh)
        shutil.copytree(grown / "documents" / "syn", fresh / "documents" / "syn")
        for workspace in (grown, fresh):
            report = (await compile_workspace(load_settings(workspace, env=env))).as_dict()
            assert report["status"] == "succeeded", report["error"]
        recompiled = await _outputs(grown, env)
        assert recompiled["actions"] and set(recompiled["actions"].values()) != {"CREATE"}  # not compiled anew
        found[kind] = _differences(recompiled, await _outputs(fresh, env), merged=merged)
    return found


def _summary(found: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {kind: {part: (len(ids) if isinstance(ids, dict) else "differs") for part, ids in d.items()}
            for kind, d in found.items() if d}


def _judge(found: dict[str, dict[str, Any]]) -> None:
    """Everything must be a fresh compile's where the topics are. Topics are communities kept from
    the previous compile (update_communities), and the topic pages, links and outline nodes built
    on them follow: found afresh, they moved unrelated pages (tests/offline/test_stability.py) and
    cost a fifth to a third more tokens on add and delete (benchmarks/reports/incremental.md).
    Where the topics differ, the test is marked as failing, naming what differs."""
    assert not {kind: d["subjects"] for kind, d in found.items() if "subjects" in d}
    moved = {kind for kind, d in found.items() if "topics" in d}
    assert "edit" not in moved  # an edit moves no node: the kept topics are the fresh ones
    assert not {kind: d for kind, d in found.items() if kind not in moved and d}, _summary(found)
    if moved:
        pytest.xfail(f"topics kept from the previous compile differ from a fresh compile's: {_summary(found)}")


async def test_each_change_to_a_corpus_ends_where_a_fresh_compile_ends_offline(tmp_path: Path):
    """The offline engine writes every page whole from its evidence: all but the topics, the
    same; with the same topics, everything."""
    _judge(await _one_path(tmp_path, {}))


async def test_each_change_to_a_corpus_ends_where_a_fresh_compile_ends_with_a_model(llm_server: LLMServer, tmp_path: Path):
    """Through a model: the same subjects, topics, outline and page plans, and the same pages, but
    for the text of those an update merged new sentences into (they cost what changed)."""
    _judge(await _one_path(tmp_path, env_for(llm_server), merged=True))
