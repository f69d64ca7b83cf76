"""Markup from documents, model output or a person's edit is shown, never run."""

from __future__ import annotations

from .browsing import open_view, screenshot, sign_in
from .test_wiki import pages_of

WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective));
"""


def assert_nothing_ran(page) -> None:
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("window.__csp") == []  # nothing even tried and was refused
    assert page.js_errors == []  # no dialog opened, no script error


def test_a_document_with_script_and_onerror_renders_inert(page, ui_server, seeded):
    page.add_init_script(WATCH)
    hostile = next(p for p in pages_of(ui_server, seeded) if "__pwned" in p["markdown"])
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/page/{hostile['slug']}", "#page-body")
    body = page.locator("#page-body")
    assert body.locator("script, img, [onerror]").count() == 0
    assert "<script>" in body.inner_text() or "onerror" in body.inner_text()  # shown as text

    # The cited passage, straight from the document, is text in the side panel too.
    body.locator("p", has_text="__pwned").first.locator("sup a.citation").first.click()
    passage = page.locator("#side-panel .passage")
    passage.wait_for()
    assert "__pwned" in passage.inner_text()
    assert page.locator("#side-panel script, #side-panel img").count() == 0
    page.wait_for_timeout(300)  # an onerror would fire as soon as the image failed
    screenshot(page, "inert-markup")
    assert_nothing_ran(page)


def test_an_edit_with_raw_html_and_javascript_links_renders_inert(page, ui_server, seeded):
    page.add_init_script(WATCH)
    # any entity or concept page but the hostile document's own, and none that the search test
    # of test_wiki.py looks for (this edit replaces the page's text for the rest of the run)
    target = next(p for p in pages_of(ui_server, seeded) if p["kind"] != "topic"
                  and "__pwned" not in p["markdown"] and "write-ahead" not in p["markdown"].lower())
    hostile = (
        "Intro <script>window.__pwned = 'edit-script'</script>\n\n"
        "<img src=x onerror=\"window.__pwned = 'edit-onerror'\">\n\n"
        "[a link](javascript:window.__pwned='edit-link') and "
        "<a href=\"javascript:window.__pwned='raw-link'\">raw link</a>\n\n"
        "<svg onload=\"window.__pwned='svg'\"></svg> <iframe src=\"javascript:1\"></iframe>\n"
    )
    with ui_server.client(seeded.key) as client:
        client.put(f"/knowledge-bases/{seeded.kb}/pages/{target['slug']}",
                   json={"markdown": hostile}).raise_for_status()
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/page/{target['slug']}", "#page-body")
    body = page.locator("#page-body")
    assert body.locator("script, img, svg, iframe, [onerror], [onload]").count() == 0
    hrefs = [a.get_attribute("href") or "" for a in body.locator("a").all()]
    assert not any(h.strip().lower().startswith("javascript:") for h in hrefs)
    for link in body.locator("a").all():
        if link.is_visible():
            link.click()
    page.wait_for_timeout(300)
    assert_nothing_ran(page)
