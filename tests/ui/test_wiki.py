"""The wiki browser in headless Chromium: sign in, read, follow links and citations, edit."""

from __future__ import annotations

import re
from typing import Any

from .browsing import open_view, screenshot, sign_in
from .server import Seed, UiServer, create_tenant, wait_for_job


def pages_of(server: UiServer, seed: Seed) -> list[dict[str, Any]]:
    with server.client(seed.key) as client:
        listed = client.get(f"/knowledge-bases/{seed.kb}/pages", params={"limit": 500}).json()["items"]
        return [client.get(f"/knowledge-bases/{seed.kb}/pages/{p['slug']}").json() for p in listed]


def test_sign_in_refuses_a_wrong_key_then_shows_the_wiki(page, ui_server, seeded):
    page.goto(f"{ui_server.url}/")
    assert page.url.endswith("/ui/")  # / redirects to the UI
    page.get_by_label("API key").fill("cmp_0123456789abcdef_not-a-real-secret")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("This key was not accepted.").wait_for()
    assert page.evaluate("sessionStorage.getItem('compendium.apiKey')") is None

    sign_in(page, ui_server.url, seeded.key)
    page.wait_for_selector(".page-list li")
    assert page.locator("#kb-select").input_value() == seeded.kb
    assert page.locator(".page-list li").count() > 20
    screenshot(page, "wiki-page-list")
    assert page.js_errors == []


def test_search_and_filters_narrow_the_page_list(page, ui_server, seeded):
    sign_in(page, ui_server.url, seeded.key)
    page.wait_for_selector(".page-list li")
    everything = page.locator(".page-list li").count()

    page.get_by_label("Kind").select_option("topic")
    page.wait_for_url(re.compile(r"kind=topic"))
    page.wait_for_selector(".page-list li")
    topics = page.locator(".page-list li > span.badge:first-of-type").all_inner_texts()  # the kind badge
    assert topics and set(topics) == {"topic"}

    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/wiki", ".page-list li")
    page.get_by_label("Search").fill("Write-Ahead Log")
    page.get_by_label("Search").press("Enter")
    page.wait_for_url(re.compile(r"q=Write-Ahead"))
    page.wait_for_selector(".page-list li")
    found = page.locator(".page-list li").count()
    assert 0 < found < everything
    assert page.js_errors == []


def test_wikilink_and_citation_lead_to_the_source_passage(page, ui_server, seeded):
    pages = pages_of(ui_server, seeded)
    live = {p["slug"] for p in pages}
    start = next(p for p in pages if p["cited_chunks"] and set(p["outlinks"]) & live)
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/page/{start['slug']}", "#page-body")
    assert page.locator("#page-title").inner_text() == start["title"]

    # A citation opens its passage beside the page, the supporting sentence marked.
    page.locator("#page-body sup a.citation").first.click()
    panel = page.locator("#side-panel")
    panel.locator(".passage mark").first.wait_for()
    chunk_id = page.locator("#page-body sup a.citation").first.get_attribute("data-chunk")
    with ui_server.client(seeded.key) as client:
        chunk = client.get(f"/knowledge-bases/{seeded.kb}/chunks/{chunk_id}").json()
    assert panel.locator("strong").first.inner_text() == chunk["document"]
    marked = " ".join(panel.locator(".passage mark").all_inner_texts())
    assert marked and marked.split()[0] in chunk["text"]
    if chunk["heading_path"]:
        assert chunk["heading_path"][-1] in panel.locator(".heading-path").inner_text()
    screenshot(page, "wiki-page-citation")
    page.keyboard.press("Escape")
    assert panel.is_hidden()

    # A wikilink leads to the linked page.
    link = page.locator("#page-body a.wikilink").first
    target = re.search(r"/page/([^/?#]+)$", link.get_attribute("href")).group(1)
    link.click()
    page.wait_for_url(re.compile(rf"/page/{re.escape(target)}$"))
    title = next(p["title"] for p in pages if p["slug"] == target)
    page.wait_for_function("t => document.querySelector('#page-title')?.textContent === t", arg=title)
    page.locator(".page-meta .related li").first.wait_for()
    assert page.js_errors == []


def test_an_edit_is_saved_marked_and_survives_a_recompile(page, ui_server, seeded):
    pages = pages_of(ui_server, seeded)
    target = next(p for p in pages if p["kind"] == "entity" and not p["edited"] and p["outlinks"])
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/page/{target['slug']}", "#page-body")
    page.get_by_role("link", name="Edit").click()
    editor = page.get_by_label("Markdown")
    editor.wait_for()
    editor.fill(f"Checked by a reviewer on the UI test, see [[{target['outlinks'][0]}]].\n\n" + editor.input_value())
    page.get_by_role("button", name="Save").click()
    page.wait_for_url(re.compile(rf"/page/{target['slug']}$"))
    page.get_by_text("Checked by a reviewer on the UI test").wait_for()
    assert page.locator(".toolbar .badge.edited").is_visible()

    with ui_server.client(seeded.key) as client:
        job = client.post(f"/knowledge-bases/{seeded.kb}/compile", json={}).json()
        assert wait_for_job(client, job["id"])["status"] == "succeeded"
    page.reload()
    page.wait_for_selector("#page-body")
    assert page.get_by_text("Checked by a reviewer on the UI test").is_visible()
    assert page.locator(".toolbar .badge.edited").is_visible()
    # The history names the person's edit, and the diff shows the added line.
    page.locator(".history li", has_text="edited by a person").wait_for()
    page.get_by_role("button", name="Compare").click()  # the previous version with the current one
    page.locator(".diff .add", has_text="Checked by a reviewer").wait_for()
    screenshot(page, "wiki-page-edited")
    assert page.js_errors == []


def test_a_key_never_shows_another_tenants_knowledge_base(page, ui_server, seeded):
    other_key = create_tenant(ui_server, "globex")
    with ui_server.client(other_key) as client:
        client.post("/knowledge-bases", json={"name": "private"}).raise_for_status()
    sign_in(page, ui_server.url, other_key)
    options = page.locator("#kb-select option").all_inner_texts()
    assert options == ["private"]
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/wiki", "main h1")
    page.get_by_role("heading", name="Not found").wait_for()
    assert page.locator(".page-list li").count() == 0
    open_view(page, ui_server.url, "#/jobs", "#running-jobs")
    assert seeded.kb not in page.locator("main").inner_text()
