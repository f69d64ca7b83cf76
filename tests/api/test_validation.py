"""Bad input gets a 4xx with a message and the offending field: never a 500, never a file
outside the knowledge base's documents folder."""

from __future__ import annotations

import pytest


@pytest.fixture
async def tenant(make_api):
    async with make_api(run_worker=False, max_upload_bytes=1000) as api:
        key = await api.tenant_key("acme")
        r = await api.client.post("/knowledge-bases", json={"name": "kb"}, headers=api.as_(key))
        assert r.status_code == 201
        yield api, api.as_(key)


def _error(r, status: int) -> dict:
    assert r.status_code == status, r.text
    body = r.json()["error"]
    assert set(body) == {"code", "message", "field"} and body["message"]
    return body


async def _upload(api, h, name, content=b"# A\n\ntext\n", ctype="text/markdown"):
    return await api.client.post("/knowledge-bases/kb/documents", files=[("files", (name, content, ctype))], headers=h)


async def test_uploads_are_checked_for_size_type_and_path(tenant):
    api, h = tenant
    assert (await _upload(api, h, "ok.md")).status_code == 201
    assert _error(await _upload(api, h, "big.md", b"x" * 2000), 413)["code"] == "too_large"
    assert _error(await _upload(api, h, "photo.png", b"\x89PNG", "image/png"), 415)["field"] == "files"
    assert _error(await _upload(api, h, "notes.md", b"# x", "image/png"), 415)
    assert _error(await _upload(api, h, "fake.pdf", b"hello", "application/pdf"), 415)
    for trick in ("../escape.md", "../../etc/passwd.md", "/abs/path.md", "a/../../b.md", "C:/x.md"):
        _error(await _upload(api, h, trick), 422)
    r = await api.client.post("/knowledge-bases/kb/documents", headers=h,
                              files=[("files", ("a.md", b"# a", "text/markdown"))], data={"folder": "../.."})
    _error(r, 422)
    written = sorted(p.relative_to(api.data_dir).as_posix() for p in api.data_dir.rglob("*.md"))
    assert written == ["kbs/acme/kb/documents/ok.md"]
    _error(await api.client.get("/knowledge-bases/kb/documents/../../secret.md", headers=h), 404)


async def test_templates_are_validated_with_line_and_key(tenant):
    api, h = tenant
    c = api.client
    bad = "name: t1\nmap:\n  batch_chunkz: 3\n"
    body = _error(await c.post("/templates/validate", json={"yaml": bad}, headers=h), 422)
    assert body["code"] == "invalid_template" and ":3" in body["message"] and "batch_chunkz" in body["field"]
    _error(await c.post("/templates", json={"yaml": "name: t1\n  - [unclosed"}, headers=h), 422)
    # A prompt reaching into Python internals fails validation (the sandbox).
    escape = "name: t2\nrefine:\n  writer_prompt: \"{{ ''.__class__.__mro__[1].__subclasses__() }}\"\n"
    assert _error(await c.post("/templates", json={"yaml": escape}, headers=h), 422)["code"] == "invalid_template"
    good = "name: t3\nversion: 1\ndescription: ok\n"
    ok = await c.post("/templates/validate", json={"yaml": good}, headers=h)
    assert ok.json() == {"valid": True, "name": "t3", "version": 1}
    assert (await c.get("/templates/t3", headers=h)).status_code == 404  # validate never saves
    assert (await c.post("/templates", json={"yaml": good}, headers=h)).status_code == 201
    assert _error(await c.post("/templates", json={"yaml": good}, headers=h), 409)["code"] == "already_exists"
    r = await c.put("/templates/t3", json={"yaml": "name: t3\ndescription: better\n"}, headers=h)
    assert r.json()["version"] == 2 and r.json()["description"] == "better"
    _error(await c.put("/templates/t3", json={"yaml": "name: other\n"}, headers=h), 422)
    _error(await c.post("/templates", json={"yaml": "name: wiki\n"}, headers=h), 422)  # a built-in
    assert (await c.delete("/templates/t3", headers=h)).status_code == 204
    _error(await c.delete("/templates/wiki", headers=h), 404)


async def test_unknown_ids_bad_bodies_and_cursors(tenant):
    api, h = tenant
    c = api.client
    for path in ("/knowledge-bases/nope", "/knowledge-bases/kb/pages/nope", "/knowledge-bases/kb/entities/nope",
                 "/knowledge-bases/kb/relations/nope", "/knowledge-bases/kb/topics/nope", "/jobs/nope",
                 "/knowledge-bases/kb/chunks/nope", "/knowledge-bases/kb/schedules/nope", "/templates/nope"):
        assert _error(await c.get(path, headers=h), 404)["code"] == "not_found", path
    _error(await c.put("/knowledge-bases/kb/pages/nope", json={"markdown": "x"}, headers=h), 404)
    assert _error(await c.post("/knowledge-bases", json={"name": "Bad Name"}, headers=h), 422)["field"] == "name"
    assert _error(await c.post("/knowledge-bases", json={"name": "kb2", "colour": 1}, headers=h), 422)["field"] == "colour"
    assert _error(await c.post("/knowledge-bases", json={"name": "kb"}, headers=h), 409)
    # A well-formed name of no template is a 404 naming the field; a malformed one a 422.
    r = await c.post("/knowledge-bases", json={"name": "kb3", "default_template": "nope"}, headers=h)
    assert _error(r, 404)["field"] == "default_template"
    assert _error(await c.post("/knowledge-bases/kb/compile", json={"template": "nope"}, headers=h), 404)["field"] == "template"
    assert _error(await c.post("/knowledge-bases/kb/compile", json={"template": "../x"}, headers=h), 422)
    assert _error(await c.get("/knowledge-bases?cursor=%%%", headers=h), 422)["field"] == "cursor"
    assert _error(await c.get("/knowledge-bases/kb/graph?cursor=eHl6", headers=h), 422)["field"] == "cursor"
    assert _error(await c.get("/knowledge-bases?limit=0", headers=h), 422)["field"] == "limit"
    assert _error(await c.post("/knowledge-bases/kb/schedules", json={"cron": "every day"}, headers=h), 422)["field"] == "cron"
    r = await c.post("/knowledge-bases", content=b"{not json", headers={**h, "content-type": "application/json"})
    _error(r, 422)


async def test_lists_are_paged_by_cursor(tenant):
    api, h = tenant
    for i in range(5):
        assert (await api.client.post("/knowledge-bases", json={"name": f"p{i}"}, headers=h)).status_code == 201
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await api.client.get("/knowledge-bases", params=params, headers=h)).json()
        assert len(page["items"]) <= 2
        seen += [kb["name"] for kb in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ["kb", "p0", "p1", "p2", "p3", "p4"]
