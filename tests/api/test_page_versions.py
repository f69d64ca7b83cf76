"""Review of a page's versions: an unchanged save is a no-op, any two versions compare, and a
revert brings an old version back as a new one."""

from __future__ import annotations

import pytest

from compendium.storage.records import Page, PageVersion
from compendium.tenancy import kb_store

BASE = "/knowledge-bases/kb/pages/alpha"


@pytest.fixture
async def kb(make_api):
    async with make_api(run_worker=False) as api:
        key = await api.tenant_key("acme")
        h = api.as_(key)
        assert (await api.client.post("/knowledge-bases", json={"name": "kb"}, headers=h)).status_code == 201
        store = kb_store(api.store, "acme", "kb")
        page = Page(id="alpha", slug="alpha", title="Alpha", markdown="# Alpha\n\nFirst line.\n", updated_at=1.0)
        await store.upsert([page, PageVersion.of(page)])
        yield api, h


async def test_saving_an_unchanged_page_makes_no_version(kb):
    api, h = kb
    same = await api.client.put(BASE, json={"markdown": "# Alpha\n\nFirst line.\n", "title": "Alpha"}, headers=h)
    assert same.status_code == 200 and same.json()["version"] == 1 and not same.json()["edited"]
    versions = (await api.client.get(f"{BASE}/versions", headers=h)).json()
    assert [v["version"] for v in versions["items"]] == [1]


async def test_any_two_versions_compare_and_an_old_one_comes_back(kb):
    api, h = kb
    for text in ("# Alpha\n\nSecond line.\n", "# Alpha\n\nThird line.\n"):
        r = await api.client.put(BASE, json={"markdown": text}, headers=h)
        assert r.status_code == 200
    versions = (await api.client.get(f"{BASE}/versions", headers=h)).json()
    assert [(v["version"], v["current"]) for v in versions["items"]] == [(3, True), (2, False), (1, False)]

    diff = (await api.client.get(f"{BASE}/compare", params={"from": 1, "to": 3}, headers=h)).json()
    assert "-First line." in diff["lines"] and "+Third line." in diff["lines"]
    assert (diff["from_version"], diff["to_version"], diff["same"]) == (1, 3, False)

    reverted = await api.client.post(f"{BASE}/revert", json={"version": 1}, headers=h)
    assert reverted.status_code == 200
    assert reverted.json()["version"] == 4 and reverted.json()["markdown"] == "# Alpha\n\nFirst line.\n"
    assert reverted.json()["edited"]  # a person chose it: compiles do not overwrite it
    listed = (await api.client.get(f"{BASE}/versions", headers=h)).json()["items"]
    assert [(v["version"], v["same_as"]) for v in listed] == [(4, 1), (3, None), (2, None), (1, None)]
    same = (await api.client.get(f"{BASE}/compare", params={"from": 1, "to": 4}, headers=h)).json()
    assert same["same"] and same["lines"] == []


async def test_a_version_that_was_never_kept_is_named_in_the_error(kb):
    api, h = kb
    r = await api.client.post(f"{BASE}/revert", json={"version": 9}, headers=h)
    assert r.status_code == 404
    assert r.json()["error"]["field"] == "version" and "9" in r.json()["error"]["message"]
    r = await api.client.get(f"{BASE}/compare", params={"from": 1, "to": 7}, headers=h)
    assert r.status_code == 404
