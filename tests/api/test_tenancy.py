"""Keys and tenants: every request needs a key, and a key sees only its own tenant."""

from __future__ import annotations

from compendium.storage.records import ApiKey
from compendium.tenancy import system_store

from .conftest import ADMIN_KEY

TEMPLATE = "name: mine\ndescription: a tenant's own template\nartifacts: [wiki_pages]\n"


async def test_a_key_sees_only_its_own_tenant(make_api):
    async with make_api(run_worker=False) as api:
        c = api.client
        a, b = api.as_(await api.tenant_key("alpha")), api.as_(await api.tenant_key("beta"))
        assert (await c.post("/knowledge-bases", json={"name": "kb"}, headers=a)).status_code == 201
        assert (await c.post("/templates", json={"yaml": TEMPLATE}, headers=a)).status_code == 201
        job = (await c.post("/knowledge-bases/kb/compile", headers=a)).json()

        # Beta asks for alpha's things by name and id: each is "not found", not "forbidden".
        for path in ("/knowledge-bases/kb", "/knowledge-bases/kb/pages", "/knowledge-bases/kb/documents",
                     "/templates/mine", f"/jobs/{job['id']}", f"/jobs/{job['id']}/events"):
            r = await c.get(path, headers=b)
            assert r.status_code == 404, (path, r.text)
            assert r.json()["error"]["code"] == "not_found"
        assert (await c.post(f"/jobs/{job['id']}/cancel", headers=b)).status_code == 404
        assert (await c.delete("/knowledge-bases/kb", headers=b)).status_code == 404
        assert (await c.get("/knowledge-bases", headers=b)).json()["items"] == []
        assert (await c.get("/jobs", headers=b)).json()["items"] == []
        names = [t["name"] for t in (await c.get("/templates", headers=b)).json()["items"]]
        assert "mine" not in names and "wiki" in names

        # Beta may use the same names without touching alpha's.
        assert (await c.post("/knowledge-bases", json={"name": "kb"}, headers=b)).status_code == 201
        assert (await c.get("/knowledge-bases/kb", headers=a)).status_code == 200
        assert [j["id"] for j in (await c.get("/jobs", headers=a)).json()["items"]] == [job["id"]]


async def test_keys_are_required_checked_and_stored_hashed(make_api):
    async with make_api(run_worker=False) as api:
        c = api.client
        assert (await c.get("/knowledge-bases")).status_code == 401
        r = await c.get("/knowledge-bases", headers=api.as_("cmp_0123456789abcdef_wrong"))
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        key = await api.tenant_key("gamma")
        assert (await c.get("/knowledge-bases", headers=api.as_(key))).status_code == 200
        # Keys go in the Authorization header only.
        assert (await c.get("/knowledge-bases", headers={"X-API-Key": key})).status_code == 401
        # A tenant key cannot make tenants; the admin key owns no knowledge bases.
        assert (await c.post("/tenants", json={"name": "x"}, headers=api.as_(key))).status_code == 403
        assert (await c.get("/knowledge-bases", headers=api.as_(ADMIN_KEY))).status_code == 403
        # Only a hash is kept: the key text appears nowhere in the store.
        records = [k async for k in system_store(api.store).scan(ApiKey)]
        assert len(records) == 1 and key.split("_", 2)[2] not in repr(records[0].to_dict())
        # A revoked key stops working.
        admin = api.as_(ADMIN_KEY)
        r = await c.delete(f"/tenants/gamma/keys/{records[0].id}", headers=admin)
        assert r.status_code == 204
        assert (await c.get("/knowledge-bases", headers=api.as_(key))).status_code == 401
