"""Recompiles pay for what changed: an edit, nothing, or one phase's part of the template."""

from __future__ import annotations

from pathlib import Path

import yaml

from compendium.storage.records import Page
from compendium.templates.registry import show_template
from compendium.templates.render import default_prompt
from tests.support.llm_server import LLMServer

from .corpus import compile_, make_workspace, records, schemas

NEW_SENTENCE = "The Buffer Pool prefetches neighbouring pages during a sequential scan."


def write_template(workspace: Path, **changes: dict) -> None:
    """A workspace copy of the built-in `wiki` template with some phase settings changed."""
    data = yaml.safe_load(show_template("wiki"))
    for phase, values in changes.items():
        data.setdefault(phase, {}).update(values)
    (workspace / "templates" / "wiki.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


async def test_nothing_changed_costs_nothing(llm_server: LLMServer, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    await compile_(workspace, llm_server)
    before = {p.slug: p.version for p in await records(workspace, llm_server, Page)}
    llm_server.reset()
    report = await compile_(workspace, llm_server)
    assert llm_server.calls["chat"] == 0
    assert report["pages"]["unchanged"] == len(before)
    assert {c["action"] for c in report["changes"]} == {"unchanged"}  # every page, with its reason
    assert {c["slug"] for c in report["changes"]} == set(before)
    assert {p.slug: p.version for p in await records(workspace, llm_server, Page)} == before


async def test_an_edit_sends_only_the_new_evidence_to_the_pages_it_touches(llm_server: LLMServer, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    await compile_(workspace, llm_server)
    pages_before = {p.slug: p for p in await records(workspace, llm_server, Page)}
    path = workspace / "documents" / "kb" / "buffer.md"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "Clock Sweep Policy. ", f"Clock Sweep Policy. {NEW_SENTENCE} "), encoding="utf-8")
    llm_server.reset()

    report = await compile_(workspace, llm_server)

    asked = schemas(llm_server)
    assert asked.get("extraction") == 1, asked  # one chunk changed: one extraction
    assert not asked.get("pairs") and not asked.get("topic"), asked
    updates = [r.prompt for r in llm_server.requests if r.schema_name == "page_additions"]
    assert updates, "the Buffer Pool page must learn the new fact"
    assert not [r for r in llm_server.requests if r.schema_name is None]  # small updates: no page call
    for prompt in updates:  # each page's headings and only its new evidence, never the whole pack
        assert "Existing page:" not in prompt
        for page in prompt.split("### [")[1:]:
            new_section = page.split("New evidence:", 1)[1].split("Pages you may link:", 1)[0]
            assert 1 <= new_section.count("[^") <= 3
    pages = {p.slug: p for p in await records(workspace, llm_server, Page)}
    pool = pages["buffer-pool"]  # the entity's page (the outline's overview of buffer.md shares its title)
    assert NEW_SENTENCE in pool.markdown
    assert pool.version == pages_before[pool.slug].version + 1
    # What the page said before is still there (the update added, it did not rewrite).
    kept = pages_before[pool.slug].markdown.split("\n\n")[0].split("[^")[0].strip()
    assert kept in pool.markdown
    archive = pages["archive-daemon"]
    assert archive.version == pages_before[archive.slug].version
    refine = report["phases"]["refine"]  # every page written was answered by a call, or needed none
    assert report["pages"]["updated"] <= refine["grouped_updates"] + refine["updates_asked_alone"] + refine["merged_without_model"]


async def test_changing_the_refine_prompt_rewrites_pages_and_asks_nothing_else(llm_server: LLMServer, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    await compile_(workspace, llm_server)
    active = [p for p in await records(workspace, llm_server, Page) if p.status == "active"]
    write_template(workspace, refine={"writer_prompt": default_prompt("page") + "\nPrefer short paragraphs."})
    llm_server.reset()

    report = await compile_(workspace, llm_server)

    assert schemas(llm_server) == {"page": len(active)}
    assert all("Prefer short paragraphs." in r.prompt for r in llm_server.requests)
    assert report["phases"]["map"]["done"] == 0 and report["phases"]["reduce"]["done"] == 0
    # Every page is asked for again; the scripted server answers alike, so a page that came back
    # byte-identical is not stored again (no new version), and counts as unchanged.
    identical = report["phases"]["refine"]["identical"]
    assert report["pages"]["updated"] + identical == len(active)
    after = {p.slug: p for p in await records(workspace, llm_server, Page)}
    assert all(after[p.slug].version == p.version for p in active if after[p.slug].markdown == p.markdown)


async def test_changing_reduce_settings_reruns_reduce_and_later_but_not_map(llm_server: LLMServer, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    first = await compile_(workspace, llm_server)
    assert "mentions" in first["phases"]["reduce"]
    write_template(workspace, reduce={"description_max_chars": 80})
    llm_server.reset()

    report = await compile_(workspace, llm_server)

    assert "extraction" not in schemas(llm_server)
    assert report["phases"]["map"]["done"] == 0 and report["phases"]["map"]["skipped"] == report["chunks"]
    assert "mentions" in report["phases"]["reduce"]  # REDUCE ran again (not served from its stage mark)
    assert report["phases"]["reduce"]["done"] > 0  # and rewrote entities: descriptions are shorter now
    assert report["phases"]["plan"]["items"] > 0 and "created" in report["phases"]["refine"]


async def test_new_evidence_the_page_already_states_is_not_sent_to_the_writer(llm_server: LLMServer, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    await compile_(workspace, llm_server)
    pool = next(p for p in await records(workspace, llm_server, Page) if p.title == "Buffer Pool")
    stated = "The Buffer Pool evicts cold pages with the Clock Sweep Policy"
    assert stated in pool.markdown
    path = workspace / "documents" / "kb" / "gateway.md"
    path.write_text(path.read_text(encoding="utf-8") + f"\n## Caching\n\n{stated}!\n", encoding="utf-8")
    llm_server.reset()

    report = await compile_(workspace, llm_server)

    assert report["phases"]["refine"]["already_stated"] >= 1
    asked = [r.prompt for r in llm_server.requests if r.schema_name is None]
    assert not [p for p in asked if 'Write the wiki page "Buffer Pool"' in p], "the page says it already"
    after = next(p for p in await records(workspace, llm_server, Page) if p.title == "Buffer Pool")
    assert after.markdown == pool.markdown
