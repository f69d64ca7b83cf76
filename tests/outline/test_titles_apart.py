"""No two pages of a compiled wiki carry one title: a node of the outline named like the page of
the entity its document is about gets an overview page titled apart."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from compendium.operations import compile_workspace, opened_store
from compendium.settings import load_settings
from compendium.storage.records import Page
from tests.incremental.corpus import make_workspace


async def test_an_overview_never_takes_the_title_of_a_page_of_its_own(tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    report = (await compile_workspace(load_settings(workspace, env={}))).as_dict()
    assert report["status"] == "succeeded", report["error"]
    async with opened_store(load_settings(workspace, env={})) as store:
        pages = [p async for p in store.scan(Page) if p.status == "active"]
    titles = Counter(p.title.casefold() for p in pages)
    assert [t for t, n in titles.items() if n > 1] == []
    # storage.md is about the Storage Engine, and the Storage Engine is the centre of a community
    assert {"Storage Engine", "Storage Engine overview", "Storage Engine topic"} <= {p.title for p in pages}
