"""What the server does for the UI: serve it safely, and the page routes the UI reads."""

from __future__ import annotations

import httpx

from .server import UiServer


def test_the_ui_is_served_with_a_policy_that_refuses_inline_script(ui_server: UiServer):
    root = httpx.get(f"{ui_server.url}/", follow_redirects=False)
    assert root.status_code == 307 and root.headers["location"] == "/ui/"
    index = httpx.get(f"{ui_server.url}/ui/")
    assert index.status_code == 200 and "<title>Compendium</title>" in index.text
    policy = index.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert index.headers["x-content-type-options"] == "nosniff"
    module = httpx.get(f"{ui_server.url}/ui/js/app.js")
    assert module.status_code == 200
    assert "javascript" in module.headers["content-type"]  # browsers refuse modules otherwise
    assert httpx.get(f"{ui_server.url}/ui/js/../../app.py").status_code == 404


def test_the_sign_in_form_is_the_first_thing_a_browser_shows(page, ui_server: UiServer):
    page.goto(f"{ui_server.url}/")
    page.get_by_label("API key").wait_for()
    assert page.js_errors == []


def test_page_history_diff_and_related_pages(ui_server: UiServer, seeded):
    base = f"/knowledge-bases/{seeded.kb}/pages"
    assert httpx.get(f"{ui_server.url}{base}/wal/history").status_code == 401  # a key is needed
    with ui_server.client(seeded.key) as client:
        pages = client.get(base, params={"limit": 500}).json()["items"]
        page = next(p for p in pages if not p["edited"])
        slug = page["slug"]
        history = client.get(f"{base}/{slug}/history").json()
        assert history["diff_available"] is False
        assert any(i["action"] == "compile: created" and i.get("job_id") for i in history["items"])
        assert client.get(f"{base}/{slug}/diff").status_code == 404  # nothing earlier kept

        full = client.get(f"{base}/{slug}").json()
        client.put(f"{base}/{slug}", json={"markdown": full["markdown"] + "\nA reviewer's note.\n"})
        history = client.get(f"{base}/{slug}/history").json()
        assert history["diff_available"] is True
        assert history["items"][0]["action"] == "edited by a person"
        diff = client.get(f"{base}/{slug}/diff").json()
        assert diff["by"] == "a person's edit"
        assert "+A reviewer's note." in diff["lines"]

        related = client.get(f"{base}/{slug}/related").json()["items"]
        assert {r["slug"] for r in related} >= set(full["outlinks"]) - {slug}
        assert all(r["slug"] != slug for r in related)
        assert client.get(f"{base}/no-such-page/related").json()["error"]["code"] == "not_found"
