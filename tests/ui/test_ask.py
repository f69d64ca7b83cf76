"""The Ask view in headless Chromium: a streamed, cited answer; a citation opens its passage in
the side panel; the evidence subgraph is highlighted on the canvas."""

from __future__ import annotations

import pytest

from .browsing import open_view, screenshot, sign_in
from .server import corpus_files, create_tenant, upload, wait_for_job

QUESTION = "How does Vacuum use the Visibility Map?"


@pytest.fixture(scope="module")
def offline_kb(ui_server):
    """A knowledge base of the sample corpus compiled offline: its answers are extractive."""
    key = create_tenant(ui_server, "asker")
    with ui_server.client(key) as client:
        client.post("/knowledge-bases", json={"name": "manual", "engine": "offline"}).raise_for_status()
        upload(client, "manual", corpus_files())
        job = client.post("/knowledge-bases/manual/compile", json={}).json()
        assert wait_for_job(client, job["id"])["status"] == "succeeded"
    return key


def test_ask_streams_a_cited_answer_and_shows_its_evidence(page, ui_server, offline_kb):
    sign_in(page, ui_server.url, offline_kb)
    assert page.locator("header nav a", has_text="Ask").get_attribute("href") == "#/kb/manual/ask"
    open_view(page, ui_server.url, "#/kb/manual/ask", "#ask-question")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_role("button", name="Ask").click()
    page.wait_for_selector("#ask-answer[data-done=true]")

    events = page.evaluate("window.__askEvents")
    # Offline, the answer says it is extractive, then streams its checked sentences.
    assert events[:2] == ["stage", "stage"] and events[-1] == "final" and "sentence" in events
    assert events.index("note") < events.index("sentence")
    assert "extractive" in page.locator("#ask-answer .note").first.inner_text().lower()
    answer = page.locator("#ask-answer").inner_text()
    assert "Visibility Map" in answer and "[C1]" in answer
    cites = page.locator("#ask-answer button.cite")
    assert cites.count() >= 2

    # The first citation opens the passage it names in the side panel.
    cites.first.click()
    page.wait_for_selector("#side-panel:not([hidden]) .source")
    shown = page.locator("#side-panel .source").get_attribute("data-chunk")
    label = cites.first.inner_text()
    listed = page.locator(f"#ask-sources li:has(button[data-ref={label}])").inner_text()
    assert shown and page.locator("#side-panel .passage mark").count() >= 1
    document = page.locator("#side-panel .source strong").first.inner_text()
    assert document.endswith(".md") or document.endswith(".html")
    assert listed.split(" ", 1)[1].startswith(document)  # the passage the evidence list names
    page.keyboard.press("Escape")

    # The canvas holds the evidence: every entity of the answer's evidence is highlighted.
    page.wait_for_selector("#ask-graph[data-ready=true]")
    marked = page.evaluate("[...window.__askGraph.highlighted.nodes]")
    drawn = page.evaluate("window.__askGraph.nodes.map((n) => n.id)")
    assert marked and set(marked) <= set(drawn)
    assert page.evaluate("window.__askGraph.highlighted.edges.size") >= 1
    screenshot(page, "ask-view")
    assert page.js_errors == []
