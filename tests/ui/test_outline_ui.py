"""The outline where readers meet it in the browser: the UI's tree navigator beside the wiki, the
canvas coloured by the outline's root topics, and the exported site's index tree with breadcrumbs."""

from __future__ import annotations

from .browsing import open_view, screenshot, sign_in
from .test_site import site  # noqa: F401  (the exported sample site, compiled once per module)


def test_the_navigator_beside_the_wiki_opens_on_the_current_page(page, ui_server, seeded):
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/wiki", ".outline-nav details")
    roots = page.locator(".outline-nav > ul > li > details > summary")
    assert 1 <= roots.count() <= 12
    # Opening a root topic shows its pages; following one keeps its branch open and marked.
    roots.first.click()
    link = page.locator(".outline-nav > ul > li > details[open] .outline-pages a").first
    title = link.inner_text()
    link.click()
    page.wait_for_selector("#page-body")
    page.wait_for_selector(".outline-nav [aria-current=page]")
    assert page.locator("#page-title").inner_text() == title
    current = page.locator(".outline-nav [aria-current=page]")
    assert current.inner_text() == title and current.is_visible()
    assert "null" not in page.locator(".outline-nav").inner_text().split()
    assert page.evaluate("""() => {
      let el = document.querySelector('.outline-nav [aria-current=page]').closest('details');
      for (; el; el = el.parentElement.closest('details')) if (!el.open) return false;
      return true;
    }""")
    page.evaluate("document.getElementById('status').textContent = ''")
    screenshot(page, "ui-outline-navigator")
    assert page.js_errors == []


def test_the_canvas_colours_nodes_by_the_outline_root_topics(page, ui_server, seeded):
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/canvas", "#graph-canvas[data-ready]")
    by_type = page.evaluate("() => new Set(window.__graph.nodes.map((n) => n.colour)).size")
    page.get_by_label("Colour by").select_option("group")
    legend = page.locator("#group-legend .group-item")
    legend.first.wait_for()
    groups = page.evaluate("() => window.__graph.groups.length")
    assert groups >= 2 and legend.count() == groups
    colours = page.evaluate("""() => {
      const g = window.__graph, by = new Map();
      for (const n of g.nodes) if (n.group) (by.get(n.group) || by.set(n.group, new Set()).get(n.group)).add(n.colour);
      return [...by.values()].map((s) => s.size);
    }""")
    assert colours and all(c == 1 for c in colours)  # one colour per root topic
    assert by_type >= 1
    screenshot(page, "ui-canvas-outline")
    assert page.js_errors == []


def test_the_site_index_is_a_tree_and_pages_show_their_place(page, site):  # noqa: F811
    page.goto((site / "index.html").as_uri())
    summaries = page.locator("section.outline > ul > li > details > summary")
    assert 1 <= summaries.count() <= 12
    summaries.first.click()
    opened = page.locator("section.outline > ul > li > details[open]").first
    link = opened.locator(".page-list a").first
    link.wait_for()
    screenshot(page, "site-index-tree")
    root_title = opened.locator("summary .node-title").first.inner_text()
    link.click()
    crumbs = page.locator("nav.breadcrumbs a")
    assert crumbs.first.inner_text() == "Contents"
    assert crumbs.all_inner_texts()[1] == root_title
    overview = "pages/" in (crumbs.nth(1).get_attribute("href") or "")
    crumbs.nth(1).click()
    if overview:  # a node some sentence describes has its overview page, listing its children
        page.wait_for_url("**/pages/*.html")
        assert page.locator("h1").first.inner_text() == root_title
        assert page.locator("section.children a").count() >= 1
    else:  # a node no sentence describes (a folder of the sample) has its place in the index
        page.wait_for_url("**/index.html#n-*")
        assert page.locator("section.outline li:target .node-title").first.inner_text() == root_title
    assert page.js_errors == []
