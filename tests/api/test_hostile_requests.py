"""Requests a stranger might send: each gets a 4xx with the JSON error body, never a 500;
bodies are bounded before they are read; HTML is served with headers that keep it inert."""

from __future__ import annotations

import httpx
import pytest
from bs4 import BeautifulSoup

from compendium.storage.records import Page
from compendium.tenancy import kb_store

LIMIT = 1000  # bytes per uploaded file in these tests


class CountingReads:
    """The ASGI app behind it, counting the body bytes it asked for (what the client sent is
    only read when the app calls receive)."""

    def __init__(self, app):
        self.app, self.read = app, 0

    async def __call__(self, scope, receive, send):
        async def counted():
            message = await receive()
            if message["type"] == "http.request":
                self.read += len(message.get("body", b""))
            return message

        await self.app(scope, counted, send)


@pytest.fixture
async def tenant(make_api):
    async with make_api(run_worker=False, max_upload_bytes=LIMIT) as api:
        key = await api.tenant_key("acme")
        h = api.as_(key)
        assert (await api.client.post("/knowledge-bases", json={"name": "kb"}, headers=h)).status_code == 201
        yield api, h


def _error(r, status: int, code: str | None = None) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    body = r.json()["error"]
    assert set(body) == {"code", "message", "field"} and body["message"]
    if code is not None:
        assert body["code"] == code, body
    return body


def _written(api) -> list[str]:
    return sorted(p.relative_to(api.data_dir).as_posix() for p in api.data_dir.rglob("*") if p.is_file()
                  and "documents" in p.parts)


async def _upload(api, h, name, folder=""):
    return await api.client.post("/knowledge-bases/kb/documents", headers=h, data={"folder": folder},
                                 files=[("files", (name, b"# A\n\ntext\n", "text/markdown"))])


async def test_yaml_with_a_control_character_is_a_422_on_every_template_route(tenant):
    api, h = tenant
    bad = {"yaml": "name: t1\ndescription: \u0002\n"}
    for method, path in (("POST", "/templates"), ("POST", "/templates/validate"), ("PUT", "/templates/t1")):
        body = _error(await api.client.request(method, path, json=bad, headers=h), 422, "invalid_template")
        assert "U+0002" in body["message"] or "#x0002" in body["message"], body
    # Nesting deeper than the parser can follow is the template's fault too.
    deep = {"yaml": "- " * 30000 + "x\n"}
    _error(await api.client.post("/templates/validate", json=deep, headers=h), 422, "invalid_template")
    # A document that breaks the YAML grammar names its line.
    body = _error(await api.client.post("/templates/validate", json={"yaml": "name: t1\nmap: [1\n"},
                                        headers=h), 422, "invalid_template")
    assert ":3" in body["message"] or ":2" in body["message"], body


async def test_a_file_name_over_255_bytes_is_refused_and_nothing_is_written(tenant):
    api, h = tenant
    long = "é" * 130 + ".md"  # 263 bytes in UTF-8, 133 characters
    assert "255 bytes" in _error(await _upload(api, h, long), 422, "invalid_input")["message"]
    _error(await _upload(api, h, "ok.md", folder="x" * 300), 422)
    _error(await _upload(api, h, "a/" * 600 + "deep.md"), 422)
    assert _written(api) == []
    # Reading or deleting such a name is simply not found.
    _error(await api.client.get(f"/knowledge-bases/kb/documents/{long}", headers=h), 404, "not_found")
    _error(await api.client.delete(f"/knowledge-bases/kb/documents/{'y' * 300}.md", headers=h), 404)
    _error(await api.client.get("/knowledge-bases/kb/documents/%C2%85", headers=h), 404)  # a blank name


async def test_a_query_parameter_given_twice_is_refused_unless_it_takes_a_list(tenant):
    api, h = tenant
    r = await api.client.get("/knowledge-bases?limit=1&limit=2", headers=h)
    assert _error(r, 422, "invalid_input")["field"] == "limit"
    r = await api.client.get("/knowledge-bases/kb/search?q=a&kind=page&kind=entity", headers=h)
    assert r.status_code == 200, r.text


async def test_a_last_event_id_that_is_no_id_is_not_an_error(tenant):
    api, h = tenant
    r = await api.client.post("/knowledge-bases/kb/compile", json={}, headers=h)
    job = r.json()["id"]
    r = await api.client.post(f"/jobs/{job}/cancel", headers=h)  # no worker here: cancelled at once
    assert r.json()["status"] == "cancelled", r.text
    for resent in ("null", "x", "9" * 40):
        r = await api.client.get(f"/jobs/{job}/events", headers={**h, "Last-Event-ID": resent})
        assert r.status_code == 200 and "event: report" in r.text, (resent, r.text)


async def test_any_cursor_of_the_documented_shape_gives_a_page(tenant):
    api, h = tenant
    for cursor in ("", "ui", "no-cache", "_-_-", "true"):  # none the API returned ("" is the first page)
        r = await api.client.get("/knowledge-bases", params={"cursor": cursor}, headers=h)
        assert r.status_code == 200 and "items" in r.json(), (cursor, r.text)
    for cursor in ("a", "%%%", "abcde", "a=b="):  # not base64url without padding
        assert _error(await api.client.get("/knowledge-bases", params={"cursor": cursor}, headers=h),
                      422)["field"] == "cursor"


async def test_hidden_files_and_folders_are_refused_with_the_reason(tenant):
    api, h = tenant
    for name, folder in ((".hidden.md", ""), ("notes/.draft.md", ""), (".git/config.md", ""),
                         ("ok.md", ".secret"), ("ok.md", "a/.b")):
        body = _error(await _upload(api, h, name, folder), 422, "invalid_input")
        assert "hidden" in body["message"] and "rename" in body["message"], body
    assert _written(api) == []
    assert (await _upload(api, h, "visible.md")).status_code == 201
    listed = (await api.client.get("/knowledge-bases/kb/documents", headers=h)).json()["items"]
    assert [d["path"] for d in listed] == ["visible.md"]


async def test_an_upload_over_the_bound_is_refused_by_content_length_unread(tenant):
    api, h = tenant
    counting = CountingReads(api.app)

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=counting), base_url="http://api") as c:
        big = b"# big\n" + b"x" * (2 * 1024 * 1024)
        r = await c.post("/knowledge-bases/kb/documents", headers=h,
                         files=[("files", ("big.md", big, "text/markdown"))])
        _error(r, 413, "too_large")
        assert counting.read == 0  # refused on the header alone
        r = await c.post("/knowledge-bases", headers={**h, "content-type": "application/json"},
                         content=b'{"name": "x", "description": "' + b"y" * (9 * 1024 * 1024) + b'"}')
        _error(r, 413, "too_large")
        assert counting.read == 0
    assert _written(api) == []


async def test_a_content_length_that_is_no_number_is_a_400(tenant):
    api, h = tenant
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message):
        sent.append(message)

    for length in ("\u00b2", "12a", "-5"):  # "²" counts as a digit to str.isdigit
        sent.clear()
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/knowledge-bases", "raw_path": b"/knowledge-bases",
                 "query_string": b"", "root_path": "", "server": ("api", 80), "client": ("t", 1),
                 "headers": [(b"content-length", length.encode("latin-1")), (b"content-type", b"application/json"),
                             *((k.lower().encode(), v.encode()) for k, v in h.items())]}
        await api.app(scope, receive, send)
        assert sent[0]["status"] == 400, (length, sent)


async def test_an_upload_without_a_key_or_to_no_knowledge_base_is_never_read(tenant):
    api, h = tenant
    counting = CountingReads(api.app)
    files = [("files", ("a.md", b"# a\n" + b"x" * 600_000, "text/markdown"))]  # under the bound
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=counting), base_url="http://api") as c:
        _error(await c.post("/knowledge-bases/kb/documents", files=files), 401, "unauthorized")
        _error(await c.post("/knowledge-bases/nope/documents", files=files, headers=h), 404, "not_found")
        assert counting.read == 0
        r = await c.post("/knowledge-bases/kb/documents", files=files, headers=h)
        _error(r, 413, "too_large")  # read, and refused at the per-file bound
        assert counting.read > 600_000
        many = [("files", (f"n{i}.md", b"# n\n", "text/markdown")) for i in range(201)]
        assert "files" in _error(await c.post("/knowledge-bases/kb/documents", files=many, headers=h),
                                 400)["message"].lower()
        _error(await c.post("/knowledge-bases/kb/documents", data={"folder": "x"}, headers=h), 422)
    assert _written(api) == []


async def test_a_chunked_upload_is_cut_off_once_it_passes_the_bound(tenant):
    api, h = tenant
    counting = CountingReads(api.app)

    boundary = "bound"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"big.md\"\r\n"
            "Content-Type: text/markdown\r\n\r\n").encode()
    block = 64 * 1024
    sent = 0

    async def body():  # no length known up front: httpx sends it chunked
        nonlocal sent
        yield head
        for _ in range(200):  # 12.5 MiB if it were all read
            sent += block
            yield b"x" * block

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=counting), base_url="http://api") as c:
        r = await c.post("/knowledge-bases/kb/documents", content=body(),
                         headers={**h, "content-type": f"multipart/form-data; boundary={boundary}"})
    _error(r, 413, "too_large")
    bound = 5 * LIMIT + 1024 * 1024
    assert counting.read <= bound + block  # it stopped reading at the bound
    assert _written(api) == []


async def test_html_is_served_with_csp_and_nosniff(tenant):
    api, h = tenant
    await kb_store(api.store, "acme", "kb").upsert([Page(id="p", slug="p", title="P", markdown="# P\n\nBody.")])
    r = await api.client.get("/knowledge-bases/kb/pages/p/html", headers=h)
    assert r.status_code == 200 and BeautifulSoup(r.text, "html.parser").find("p")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert "object-src 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    ui = await api.client.get("/ui/")
    assert ui.status_code == 200 and "default-src 'self'" in ui.headers["content-security-policy"]
    assert ui.headers["x-content-type-options"] == "nosniff"
    me = await api.client.get("/me", headers=h)
    assert me.headers["x-content-type-options"] == "nosniff"


async def test_the_openapi_schema_documents_every_error_with_the_error_body(tenant):
    api, _ = tenant
    schema = (await api.client.get("/openapi.json")).json()
    assert set(schema["components"]["schemas"]["ErrorBody"]["properties"]) == {"error"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            codes = set(operation["responses"])
            assert {"401", "422", "503"} <= codes, (method, path)
            if "{" in path:
                assert "404" in codes, (method, path)
            for code, response in operation["responses"].items():
                if code[0] in "45":
                    assert response["content"] == {"application/json": {"schema": {
                        "$ref": "#/components/schemas/ErrorBody"}}}, (method, path, code)
    upload = schema["paths"]["/knowledge-bases/{kb}/documents"]["post"]["responses"]
    assert {"413", "415"} <= set(upload)


async def test_a_method_a_path_does_not_take_names_every_one_it_does(tenant):
    api, h = tenant
    r = await api.client.request("OPTIONS", "/knowledge-bases", headers=h)
    _error(r, 405)
    assert r.headers["allow"] == "GET, HEAD, POST"
    r = await api.client.request("POST", "/knowledge-bases/kb/pages/p", headers=h)
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD, PUT"
