"""The exported static site in headless Chromium, opened from its folder (file://) as a reader
would: a citation opens its passage with the cited sentence highlighted, search ranks exact
titles first, the graph view draws, and dark mode follows the system and the toggle."""

from __future__ import annotations

import asyncio
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .browsing import SCREENSHOTS, screenshot

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample corpus compiled offline in a workspace titled 'Lumen DB handbook', exported."""
    from compendium.operations import compile_workspace, export_workspace
    from compendium.settings import load_settings
    from compendium.workspace import init_workspace

    root = init_workspace(tmp_path_factory.mktemp("site") / "ws")
    shutil.copytree(REPO / "samples" / "corpus", root / "documents" / "corpus")
    config = root / "compendium.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "title: Lumen DB handbook\n", encoding="utf-8")
    settings = load_settings(root, env={})

    async def build() -> Path:
        await compile_workspace(settings)
        return (await export_workspace(settings, "site", root / "site")).path

    with ThreadPoolExecutor(1) as pool:  # the Playwright tests already hold this thread's loop
        return pool.submit(asyncio.run, build()).result()


def test_a_citation_opens_its_passage_with_the_sentence_highlighted(page, site: Path):
    page.goto((site / "pages" / "vacuum.html").as_uri())
    assert page.title() == "Vacuum · Lumen DB handbook"
    assert page.locator("h1").count() == 1
    ref = page.locator("sup.footnote-ref a").first
    citing = page.evaluate("a => a.closest('p, li').textContent", ref.element_handle())
    ref.click()
    page.wait_for_url("**/sources/*.html#c-*-s*")
    target = page.locator(":target")
    assert target.get_attribute("class") == "sentence"
    # The highlighted sentence is drawn from the citing one: they share most of their words.
    words = {w for w in target.inner_text().lower().split() if len(w) > 3}
    assert len(words & set(citing.lower().split())) >= min(3, len(words))
    assert page.evaluate("() => getComputedStyle(document.querySelector(':target')).backgroundColor") != "rgba(0, 0, 0, 0)"
    passage = page.locator("section.passage:has(:target)")
    label = passage.locator(".heading-path").inner_text()
    # the passage's place: its document's title, then its headings (none for a document's opening)
    assert label.partition(" › ")[0] == page.locator("h1").first.inner_text().strip() and "chunk" not in label
    title, _, rest = label.partition(" › ")
    assert not rest.startswith(title)  # the document title is not repeated
    box = target.bounding_box()
    assert 0 <= box["y"] < page.viewport_size["height"]  # scrolled into view
    screenshot(page, "site-citation-passage")

    # The footnote names the passage and opens it too.
    page.go_back()
    note = page.locator("section.footnotes a.source-link").first
    assert "chunk" not in note.inner_text()
    note.click()
    page.wait_for_url("**/sources/*.html#c-*")
    assert page.locator("section.passage:target").count() == 1
    assert page.js_errors == []


def test_search_ranks_the_exact_title_first(page, site: Path):
    page.goto((site / "index.html").as_uri())
    assert page.locator("h1").inner_text() == "Lumen DB handbook"
    page.get_by_label("Search pages").fill("vacuum")
    results = page.locator("#search-results li a")
    results.first.wait_for()
    titles = results.all_inner_texts()
    assert titles[0] == "Vacuum"
    prefixed = [t for t in titles if t.lower().startswith("vacuum")]
    assert titles[: len(prefixed)] == prefixed  # titles starting with the query come next
    screenshot(page, "site-search")
    assert page.js_errors == []


def test_the_graph_view_draws_from_a_folder_and_opens_pages(page, site: Path):
    page.goto((site / "graph.html").as_uri())
    page.wait_for_selector("#graph-canvas[data-ready]")
    page.wait_for_function("() => window.__graph.stats.drawnNodes > 0")
    stats = page.evaluate("() => [window.__graph.nodes.length, window.__graph.edges.length, window.__graph.labelBoxes.length]")
    assert stats[0] > 100 and stats[1] > 100 and stats[2] > 10
    node = page.evaluate("""() => {
      const g = window.__graph;
      for (const n of g.byImportance) {
        const p = g.toScreen(n);
        if (n.href && p.x > 20 && p.y > 20 && p.x < g.width - 20 && p.y < g.height - 20 && g.nodeAt(p.x, p.y) === n)
          return { x: p.x, y: p.y, href: n.href };
      }
      return null;
    }""")
    screenshot(page, "site-graph")
    box = page.locator("#graph-canvas").bounding_box()
    page.mouse.click(box["x"] + node["x"], box["y"] + node["y"])
    page.wait_for_url(f"**/{node['href']}")
    assert page.js_errors == []


def test_dark_mode_follows_the_system_and_the_toggle_remembers(browser, site: Path):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    tab = context.new_page()
    try:
        background = "() => getComputedStyle(document.body).backgroundColor"
        tab.goto((site / "pages" / "vacuum.html").as_uri())
        dark = tab.evaluate(background)
        assert dark != "rgb(255, 255, 255)"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SCREENSHOTS / "site-dark.png"))
        toggle = tab.locator("#theme-toggle")
        assert toggle.inner_text() == "Light mode"
        toggle.click()
        assert tab.evaluate(background) == "rgb(255, 255, 255)"
        tab.goto((site / "index.html").as_uri())  # the choice holds on the next page
        assert tab.evaluate(background) == "rgb(255, 255, 255)"
        assert tab.locator("#theme-toggle").inner_text() == "Dark mode"
        # The graph view's labels follow the theme too.
        tab.goto((site / "graph.html").as_uri())
        tab.wait_for_selector("#graph-canvas[data-ready]")
        tab.wait_for_function("() => window.__graph.labelBoxes.length > 0")
        assert tab.evaluate("() => window.__graph.theme.ink") == "#1f2328"
        tab.locator("#theme-toggle").click()
        tab.wait_for_function("() => window.__graph.theme.ink === '#e6e9ed'")
        tab.screenshot(path=str(SCREENSHOTS / "site-dark-graph.png"))
    finally:
        context.close()
