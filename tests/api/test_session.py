"""A whole session through the API: tenant, key, knowledge base, upload, compile against the
scripted LLM server, follow the events, read pages, entities and canvas, edit, recompile."""

from __future__ import annotations

from tests.support.llm_fixtures import settings_for


async def test_whole_session_keeps_a_persons_edit_across_recompiles(make_api, llm_server):
    async with make_api(settings_for(llm_server)) as api:
        key = await api.tenant_key("acme")
        h = api.as_(key)
        c = api.client

        r = await c.post("/knowledge-bases", json={"name": "handbook", "description": "Lumen DB"}, headers=h)
        assert r.status_code == 201, r.text
        uploaded = await api.upload_corpus("handbook", key)
        assert uploaded >= 30
        docs = (await c.get("/knowledge-bases/handbook/documents?limit=500", headers=h)).json()
        assert len(docs["items"]) == uploaded and not any(d["compiled"] for d in docs["items"])

        r = await c.post("/knowledge-bases/handbook/compile", json={}, headers=h)
        assert r.status_code == 202, r.text
        job = r.json()
        assert job["template"] == "wiki" and job["status"] in ("queued", "running")

        events = await api.follow(job["id"], key)
        names = [name for name, _ in events]
        started = [data["phase"] for name, data in events if name == "PhaseStarted"]
        assert started == ["ingest", "map", "reduce", "plan", "refine"]
        assert "PhaseProgress" in names and names[-1] == "report"
        final = events[-1][1]
        assert final["status"] == "succeeded", final
        assert final["report"]["totals"]["llm_calls"] > 0
        assert final["progress"]["tokens"] > 0  # tokens counted against the scripted server
        assert llm_server.calls  # the compile really went through the LLM endpoint

        job = (await c.get(f"/jobs/{job['id']}", headers=h)).json()
        assert job["status"] == "succeeded" and job["progress"]["phases"]["map"]["status"] == "finished"

        pages = (await c.get("/knowledge-bases/handbook/pages?limit=500", headers=h)).json()["items"]
        assert len(pages) > 10
        entity_page = next(p for p in pages if p["kind"] == "entity")
        slug = entity_page["slug"]
        full = (await c.get(f"/knowledge-bases/handbook/pages/{slug}", headers=h)).json()
        md = await c.get(f"/knowledge-bases/handbook/pages/{slug}/markdown", headers=h)
        assert md.headers["content-type"].startswith("text/markdown") and md.text == full["markdown"]
        html = await c.get(f"/knowledge-bases/handbook/pages/{slug}/html", headers=h)
        assert html.status_code == 200 and "<p>" in html.text and "<script" not in html.text

        entities = (await c.get("/knowledge-bases/handbook/entities?limit=500", headers=h)).json()["items"]
        assert entities
        subject = full["subject_id"]
        entity = (await c.get(f"/knowledge-bases/handbook/entities/{subject}", headers=h)).json()
        assert entity["page"] == slug

        canvas = (await c.get("/knowledge-bases/handbook/graph", headers=h)).json()
        assert canvas["nodes"] and canvas["edges"]
        ids = {n["id"] for n in canvas["nodes"]}
        assert all(e["source"] in ids and e["target"] in ids for e in canvas["edges"])
        assert all(-1.0 <= n["x"] <= 1.0 and -1.0 <= n["y"] <= 1.0 for n in canvas["nodes"])
        around = (await c.get(f"/knowledge-bases/handbook/graph?entity={subject}&depth=1", headers=h)).json()
        assert subject in {n["id"] for n in around["nodes"]}

        hits = (await c.get("/knowledge-bases/handbook/search", params={"q": full["title"]}, headers=h)).json()
        assert hits and hits[0]["title"].casefold() == full["title"].casefold()

        edited_text = f"# {full['title']}\n\nWritten by a reviewer: this page is curated by hand.\n"
        r = await c.put(f"/knowledge-bases/handbook/pages/{slug}", json={"markdown": edited_text}, headers=h)
        assert r.status_code == 200, r.text
        assert r.json()["edited"] is True and r.json()["version"] == full["version"] + 1

        # New evidence about the page's subject, then a recompile.
        note = f"# Notes on {full['title']}\n\n{full['title']} was reviewed again this year. " \
               f"{full['title']} is described in the handbook.\n"
        files = [("files", ("notes.md", note.encode(), "text/markdown"))]
        assert (await c.post("/knowledge-bases/handbook/documents", files=files, headers=h)).status_code == 201
        r = await c.post("/knowledge-bases/handbook/compile", json={"template": "wiki"}, headers=h)
        assert r.status_code == 202
        events = await api.follow(r.json()["id"], key)
        report = events[-1][1]
        assert report["status"] == "succeeded"
        assert report["report"]["phases"]["ingest"]["done"] >= 1  # the new document was read

        after = (await c.get(f"/knowledge-bases/handbook/pages/{slug}", headers=h)).json()
        assert after["markdown"] == edited_text and after["edited"] is True
        assert after["pending_update"] is True  # the compile had new evidence and left the edit alone
