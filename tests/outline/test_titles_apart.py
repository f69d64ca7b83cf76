"""No two pages of a compiled wiki carry one title, and no subject gets two pages: a node of the
outline named like a page of the wiki (the entity its document is about) takes that page as its
overview; so does a community named like one of its members, whose page it then is."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from compendium.export.site import render_topics
from compendium.export.snapshot import load_snapshot
from compendium.operations import compile_workspace, opened_store
from compendium.outline import OutlineNode
from compendium.outline.stored import published
from compendium.settings import load_settings
from compendium.storage.records import Entity, Page, Topic
from tests.incremental.corpus import make_workspace

from .test_outline_exports import _stored


async def _compiled(tmp_path: Path) -> Path:
    """The incremental tests' small workspace, compiled offline."""
    workspace = make_workspace(tmp_path / "ws")
    report = (await compile_workspace(load_settings(workspace, env={}))).as_dict()
    assert report["status"] == "succeeded", report["error"]
    return workspace


async def test_a_node_named_like_a_page_has_that_page_as_its_overview(tmp_path: Path):
    workspace = await _compiled(tmp_path)
    async with opened_store(load_settings(workspace, env={})) as store:
        pages = [p async for p in store.scan(Page) if p.status == "active"]
    titles = Counter(p.title.casefold() for p in pages)
    assert [t for t, n in titles.items() if n > 1] == []
    by_slug = {p.slug: p for p in pages}
    # storage.md is about the Storage Engine, and the Storage Engine is the centre of a community:
    # its entity page is the document's overview and the community's page.
    assert "Storage Engine" in {p.title for p in pages}
    assert not {"storage engine overview", "storage engine topic"} & set(titles)
    stored = await asyncio.to_thread(_stored, workspace)
    nodes = [n for d in stored["roots"] for n, _depth in OutlineNode.from_dict(d).walk()]
    engine = next(n for n in nodes if n.title == "Storage Engine")
    overview = by_slug[engine.slug]
    assert (overview.kind, overview.title) == ("entity", "Storage Engine")
    published_node = next(n for n in _tree_nodes(published(stored, set(by_slug))) if n["title"] == "Storage Engine")
    assert published_node["slug"] == overview.slug and overview.slug not in published_node["pages"]
    # Every node still has a cited overview page; each page is the overview of one node at most.
    assert all(n.slug in by_slug and by_slug[n.slug].cited_chunks for n in nodes)
    assert len({n.slug for n in nodes}) == len(nodes)


def _tree_nodes(tree: dict) -> list[dict]:
    found, stack = [], list(tree["children"])
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node["children"])
    return found


async def test_a_community_named_like_a_member_has_that_members_page(tmp_path: Path):
    workspace = await _compiled(tmp_path)
    async with opened_store(load_settings(workspace, env={})) as store:
        pages = [p async for p in store.scan(Page) if p.status == "active"]
        topics = [t async for t in store.scan(Topic)]
        engine = next(e for e in [e async for e in store.scan(Entity)] if e.name == "Storage Engine")
        wiki = await load_snapshot(store)
    community = next(t for t in topics if t.title == "Storage Engine")
    assert community.page_subject == engine.id and engine.id in community.members
    assert not [p for p in pages if p.subject_id == community.id]  # no second page on the subject
    page = next(p for p in pages if p.subject_id == engine.id)
    assert page.slug not in page.outlinks  # the page does not link to itself as its topic
    # The other members' pages link to it as their topic's page; the topics index links to it.
    others = [p for p in pages if p.subject_id in community.members and p.subject_id != engine.id]
    assert others and all(page.slug in p.outlinks for p in others)
    heading = f'<section class="topic" id="{community.slug}">\n  <h2><a href="pages/{page.slug}.html">'
    assert heading in render_topics(wiki, "KB")


def test_a_value_or_placeholder_names_no_group():
    from compendium.titles import names_a_subject

    assert not any(names_a_subject(t) for t in ("null", "true", "`None`", "str", "-k", "42"))
    assert all(names_a_subject(t) for t in ("StringUtils", "indexOf()", "git-am(1)", "WAL", "Range"))
