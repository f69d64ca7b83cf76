"""The entity canvas in headless Chromium: draw, filter by type, hover, click through."""

from __future__ import annotations

import re

from .browsing import open_view, screenshot, sign_in

# A node with a page, on screen, that a click at its centre would hit (not covered by another).
CLICKABLE_NODE = """() => {
  const g = window.__graph;
  for (const n of [...g.visibleNodes()].sort((a, b) => b.r - a.r)) {
    const p = g.toScreen(n);
    if (!n.page || p.x < 20 || p.y < 20 || p.x > g.width - 20 || p.y > g.height - 20) continue;
    if (g.nodeAt(p.x, p.y) === n) return { id: n.id, page: n.page, label: n.label, x: p.x, y: p.y };
  }
  return null;
}"""

# A relation whose midpoint is clear of nodes, so a click there hits the line.
CLICKABLE_EDGE = """() => {
  const g = window.__graph;
  for (const e of g.edges) {
    if (!g.edgeShown(e)) continue;
    const a = g.toScreen(e.s), b = g.toScreen(e.t);
    const x = (a.x + b.x) / 2, y = (a.y + b.y) / 2;
    if (x < 20 || y < 20 || x > g.width - 20 || y > g.height - 20) continue;
    if (!g.nodeAt(x, y) && g.edgeAt(x, y) === e) return { id: e.id, type: e.type, x, y };
  }
  return null;
}"""


def open_canvas(page, ui_server, seeded, query: str = "") -> dict:
    sign_in(page, ui_server.url, seeded.key)
    open_view(page, ui_server.url, f"#/kb/{seeded.kb}/canvas{query}", "#graph-canvas[data-ready]")
    page.wait_for_function("() => window.__canvasStats && window.__canvasStats.drawnNodes > 0")
    return page.locator("#graph-canvas").bounding_box()


def test_canvas_draws_filters_by_type_and_opens_a_page(page, ui_server, seeded):
    box = open_canvas(page, ui_server, seeded)
    with ui_server.client(seeded.key) as client:
        graph = client.get(f"/knowledge-bases/{seeded.kb}/graph", params={"limit": 5000}).json()
    total = len(graph["nodes"])
    assert page.evaluate("window.__graph.nodes.length") == total
    assert page.evaluate("window.__graph.edges.length") == len(graph["edges"])
    assert page.locator(".legend-item").count() == len({n["type"] for n in graph["nodes"]})
    screenshot(page, "canvas")

    # Filter out one type: its nodes are no longer drawn, nor clickable.
    hidden = sorted({n["type"] for n in graph["nodes"]})[0]
    count = sum(1 for n in graph["nodes"] if n["type"] == hidden)
    page.get_by_label(re.compile(rf"^{re.escape(hidden)} \(")).uncheck()
    page.wait_for_function("n => window.__canvasStats.drawnNodes === n", arg=total - count)
    assert page.evaluate("t => window.__graph.visibleNodes().some(n => n.type === t)", hidden) is False
    screenshot(page, "canvas-filtered")

    # Hover shows the entity's description; a click lands on its page.
    node = page.evaluate(CLICKABLE_NODE)
    assert node is not None
    page.mouse.move(box["x"] + node["x"], box["y"] + node["y"])
    tooltip = page.locator("#graph-tooltip")
    tooltip.wait_for()
    assert node["label"] in tooltip.inner_text()
    page.mouse.click(box["x"] + node["x"], box["y"] + node["y"])
    page.wait_for_url(re.compile(rf"/page/{re.escape(node['page'])}$"))
    page.wait_for_selector("#page-body")
    assert page.js_errors == []


def test_a_relation_opens_its_supporting_passages(page, ui_server, seeded):
    box = open_canvas(page, ui_server, seeded)
    page.get_by_role("button", name="Fit").click()
    page.locator("#graph-canvas").focus()  # keyboard zoom works once the canvas has focus
    for _ in range(3):
        page.keyboard.press("+")
    page.wait_for_timeout(100)
    edge = page.evaluate(CLICKABLE_EDGE)
    assert edge is not None
    page.mouse.move(box["x"] + edge["x"], box["y"] + edge["y"])
    page.locator("#graph-tooltip", has_text=re.compile(rf"{re.escape(edge['type'])} · strength \d")).wait_for()
    page.mouse.click(box["x"] + edge["x"], box["y"] + edge["y"])
    panel = page.locator("#side-panel")
    panel.get_by_text("Supporting passages").wait_for()
    assert edge["type"] in panel.inner_text()
    panel.get_by_role("link", name="Passage 1").click()
    panel.locator(".passage").wait_for()
    assert page.js_errors == []


def test_canvas_around_one_entity_shows_its_neighbourhood(page, ui_server, seeded):
    with ui_server.client(seeded.key) as client:
        centre = client.get(f"/knowledge-bases/{seeded.kb}/graph", params={"limit": 1}).json()["nodes"][0]
        around = client.get(f"/knowledge-bases/{seeded.kb}/graph",
                            params={"entity": centre["id"], "depth": 1}).json()
    open_canvas(page, ui_server, seeded, f"?focus={centre['id']}&depth=1")
    assert page.evaluate("window.__graph.nodes.length") == len(around["nodes"])
    assert page.evaluate("window.__graph.selected.id") == centre["id"]
    assert page.locator("#depth").input_value() == "1"


def test_keyboard_only_find_an_entity_and_open_its_page(page, ui_server, seeded):
    open_canvas(page, ui_server, seeded)
    target = page.evaluate("() => window.__graph.nodes.find((n) => n.page)")
    page.get_by_label("Find").fill(target["label"])
    page.get_by_label("Find").press("Enter")
    page.wait_for_function("id => window.__graph.selected?.id === id", arg=target["id"])
    assert page.evaluate("() => document.activeElement.id") == "graph-canvas"
    page.keyboard.press("-")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/page/{re.escape(target['page'])}$"))
    assert page.js_errors == []
