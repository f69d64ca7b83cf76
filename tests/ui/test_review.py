"""Review in the UI: compare any two versions of a page, revert, no empty versions, titles
once, errors as sentences, the wiki by keyboard, and dark mode."""

from __future__ import annotations

import re

from .browsing import SCREENSHOTS, open_view, screenshot, sign_in
from .server import Seed, UiServer


def a_page(server: UiServer, seed: Seed, index: int) -> dict:
    with server.client(seed.key) as client:
        listed = client.get(f"/knowledge-bases/{seed.kb}/pages", params={"limit": 500, "kind": "entity"}).json()
        slug = sorted(p["slug"] for p in listed["items"] if not p["edited"])[index]
        return dict(client.get(f"/knowledge-bases/{seed.kb}/pages/{slug}").json())


def versions(server: UiServer, seed: Seed, slug: str) -> list[int]:
    with server.client(seed.key) as client:
        items = client.get(f"/knowledge-bases/{seed.kb}/pages/{slug}/versions").json()["items"]
        return [v["version"] for v in items]


def save(page, markdown: str | None = None) -> None:
    page.locator("#edit-page").click()
    editor = page.get_by_label("Markdown")
    editor.wait_for()
    if markdown is not None:
        editor.fill(markdown)
    page.get_by_role("button", name="Save").click()
    page.wait_for_selector("#page-body")


def test_compare_two_versions_then_revert(page, ui_server, seeded):
    target = a_page(ui_server, seeded, -1)  # from the end: other tests edit the first pages
    slug, original = target["slug"], target["markdown"]
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/page/{slug}", "#page-body")
    # The title shows once: the page's own "# Title" line is not repeated under the heading.
    assert page.locator("main h1").all_inner_texts() == [target["title"]]
    # Footnotes name their source once, without the chunk hash.
    for note in page.locator(".footnotes li").all_inner_texts():
        assert "chunk " not in note
        title, _, rest = note.partition(" › ")
        assert not rest.startswith(title)

    save(page)  # saved unchanged: nothing new to keep
    page.get_by_text("No changes to save").wait_for()
    assert versions(ui_server, seeded, slug) == [target["version"]]

    first = target["version"]
    save(page, original.replace("\n\n", "\n\nA first reviewer's line.\n\n", 1))
    page.get_by_text("A first reviewer's line.").wait_for()
    save(page, original.replace("\n\n", "\n\nA second reviewer's line.\n\n", 1))
    page.get_by_text("A second reviewer's line.").wait_for()
    assert versions(ui_server, seeded, slug) == [first + 2, first + 1, first]

    # Compare the compiled version with the latest one: both reviewers' lines... only the second remains.
    page.locator("#compare-from").select_option(str(first))
    page.locator("#compare-to").select_option(str(first + 2))
    page.get_by_role("button", name="Compare").click()
    page.locator(".diff .add", has_text="A second reviewer's line.").wait_for()
    assert page.locator(".diff .add", has_text="A first reviewer's line.").count() == 0
    page.locator("#compare-to").select_option(str(first + 1))
    page.get_by_role("button", name="Compare").click()
    page.locator(".diff .add", has_text="A first reviewer's line.").wait_for()
    page.locator("#page-diff").scroll_into_view_if_needed()
    screenshot(page, "review-compare")

    # Revert to the compiled version: a new version with the old text.
    page.locator("#compare-from").select_option(str(first))
    page.get_by_role("button", name=f"Revert to v{first}").click()
    page.wait_for_url(re.compile(rf"reverted={first}$"))
    page.wait_for_selector("#page-body")
    assert page.get_by_text("A second reviewer's line.").count() == 0
    assert versions(ui_server, seeded, slug) == [first + 3, first + 2, first + 1, first]
    with ui_server.client(seeded.key) as client:
        now = client.get(f"/knowledge-bases/{seeded.kb}/pages/{slug}").json()
    assert now["markdown"] == original and now["version"] == first + 3
    assert f"v{first + 3} (current) · back to v{first}" in page.locator("#compare-to").inner_text()
    screenshot(page, "review-reverted")
    assert page.js_errors == []


def test_an_empty_page_is_refused_with_a_sentence(page, ui_server, seeded):
    target = a_page(ui_server, seeded, -2)
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/page/{target['slug']}/edit", "#edit-markdown")
    page.get_by_label("Markdown").fill("")
    page.get_by_role("button", name="Save").click()
    error = page.locator("form .error")
    error.wait_for()
    page.wait_for_function("() => document.querySelector('form .error').textContent.length > 0")
    assert error.inner_text() == "Markdown cannot be empty."
    screenshot(page, "review-error")


def test_the_wiki_by_keyboard(page, ui_server, seeded):
    sign_in(page, ui_server.url, seeded.key)
    page.wait_for_selector(".page-list li")
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.name") == "q"
    page.keyboard.press("ArrowDown")  # from the search box into the list
    page.keyboard.press("j")
    second = page.locator(".page-list li > a").nth(1)
    assert page.evaluate("() => document.activeElement.textContent") == second.inner_text()
    page.keyboard.press("k")
    first = page.locator(".page-list li > a").first
    assert page.evaluate("() => document.activeElement.textContent") == first.inner_text()
    slug = first.get_attribute("href").rsplit("/", 1)[-1]
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/page/{re.escape(slug)}$"))
    page.wait_for_selector("#page-body")
    page.keyboard.press("e")
    page.wait_for_url(re.compile(rf"/page/{re.escape(slug)}/edit$"))
    page.get_by_label("Markdown").wait_for()
    page.go_back()
    page.wait_for_selector("#page-body")
    page.keyboard.press("Backspace")
    page.wait_for_url(re.compile(r"/wiki$"))
    assert page.js_errors == []


def test_dark_mode_follows_the_system_and_the_toggle(browser, ui_server, seeded):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    tab = context.new_page()
    try:
        background = "() => getComputedStyle(document.documentElement).backgroundColor"
        sign_in(tab, ui_server.url, seeded.key)
        tab.wait_for_selector(".page-list li")
        assert tab.evaluate(background) == "rgb(20, 24, 29)"
        assert tab.locator("#theme-toggle").inner_text() == "Light mode"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SCREENSHOTS / "ui-dark-wiki.png"))
        open_view(tab, ui_server.url, f"#/kb/{seeded.kb}/canvas", "#graph-canvas[data-ready]")
        tab.wait_for_function("() => window.__graph.labelBoxes.length > 0")
        ink = tab.evaluate("() => window.__graph.theme.ink")
        assert ink == "#e4e7eb"  # labels drawn light on the dark canvas
        tab.screenshot(path=str(SCREENSHOTS / "ui-dark-canvas.png"))
        tab.locator("#theme-toggle").click()
        assert tab.evaluate(background) == "rgb(255, 255, 255)"
        tab.wait_for_function("() => window.__graph.theme.ink === '#212529'")
        tab.reload()
        tab.wait_for_selector("#graph-canvas")
        assert tab.evaluate(background) == "rgb(255, 255, 255)"  # the choice is remembered
    finally:
        context.close()
