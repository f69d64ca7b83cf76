"""The canvas at 5,000 entities and 20,000 relations: labels by importance that never overlap at
the default zoom (measured from the renderer's own label boxes), nodes that keep their size on
screen while zooming (measured in the canvas pixels), orphans hidden by the strength filter."""

from __future__ import annotations

import pytest

from .browsing import open_view, screenshot, sign_in
from .large_graph import seed_large_graph

OVERLAPS = """() => {
  const boxes = window.__graph.labelBoxes;
  let overlaps = 0;
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) overlaps++;
    }
  return overlaps;
}"""

# Radius in canvas pixels of the most important node on screen with no other node near it: the
# run of pixels of its colour from its centre, shortest of the four directions. No label may cross
# it either (labels are drawn over nodes).
DRAWN_RADIUS = """() => {
  const g = window.__graph;
  const ctx = g.canvas.getContext("2d");
  const near = (n, p) => g.nodes.some((o) => {
    if (o === n || !g.isShown(o)) return false;
    const q = g.toScreen(o);
    return Math.hypot(q.x - p.x, q.y - p.y) < n.r + o.r + 3;
  }) || g.labelBoxes.some((b) => b.x0 < p.x + n.r + 2 && p.x - n.r - 2 < b.x1 && b.y0 < p.y + n.r + 2 && p.y - n.r - 2 < b.y1);
  const node = g.byImportance.find((n) => {
    const p = g.toScreen(n);
    return g.isShown(n) && p.x > 60 && p.y > 60 && p.x < g.width - 60 && p.y < g.height - 60 && !near(n, p);
  });
  const p = g.toScreen(node);
  const cx = Math.round(p.x * g.dpr), cy = Math.round(p.y * g.dpr);
  const data = ctx.getImageData(cx - 60, cy - 60, 121, 121).data;
  const at = (x, y) => { const i = ((60 + y) * 121 + (60 + x)) * 4; return [data[i], data[i + 1], data[i + 2]]; };
  const colour = at(0, 0);
  // Within 60 per channel: the picture may be copied at a sub-pixel offset, which blends a little.
  const same = (c) => c.every((v, i) => Math.abs(v - colour[i]) < 60);
  const run = (dx, dy) => { let k = 0; while (k < 60 && same(at(dx * (k + 1), dy * (k + 1)))) k++; return k; };
  return { id: node.id, radius: Math.min(run(1, 0), run(-1, 0), run(0, 1), run(0, -1)) / g.dpr };
}"""


@pytest.fixture(scope="module")
def large(ui_server):
    return seed_large_graph(ui_server, tenant="bigco", kb="big")


def open_big_canvas(page, ui_server, key) -> None:
    sign_in(page, ui_server.url, key)
    open_view(page, ui_server.url, "#/kb/big/canvas", "#graph-canvas[data-ready]")
    page.get_by_role("button", name="Fit").click()
    page.wait_for_function("() => window.__graph.stats.drawnNodes > 0 && !window.__graph.needFull")


def test_labels_never_overlap_and_go_to_the_most_important_nodes(page, ui_server, large):
    open_big_canvas(page, ui_server, large)
    assert page.evaluate("() => [window.__graph.nodes.length, window.__graph.edges.length]") == [5000, 20000]
    boxes = page.evaluate("() => window.__graph.labelBoxes")
    assert len(boxes) >= 40  # enough names to find one's way at the default zoom
    assert page.evaluate(OVERLAPS) == 0
    labelled = page.evaluate("""() => {
      const g = window.__graph, ids = new Set(g.labelBoxes.map((b) => b.id));
      const all = g.nodes.map((n) => n.size).sort((a, b) => a - b);
      const mine = g.nodes.filter((n) => ids.has(n.id)).map((n) => n.size).sort((a, b) => a - b);
      return { median: all[all.length >> 1], labelledMedian: mine[mine.length >> 1] };
    }""")
    screenshot(page, "canvas-5000")
    assert labelled["labelledMedian"] > labelled["median"]  # the more important ones
    screenshot(page, "canvas-5000")

    # Zooming in reveals more labels (level of detail), still none overlapping.
    page.locator("#graph-canvas").focus()
    for _ in range(4):
        page.keyboard.press("+")
    page.wait_for_function("() => !window.__graph.needFull")
    page.wait_for_timeout(50)
    assert page.evaluate(OVERLAPS) == 0
    assert page.evaluate("() => window.__graph.labelBoxes.length") >= len(boxes)
    screenshot(page, "canvas-5000-zoomed")
    assert page.js_errors == []


def test_nodes_keep_their_size_on_screen_while_zooming(page, ui_server, large):
    open_big_canvas(page, ui_server, large)
    page.locator("#graph-canvas").focus()
    for _ in range(5):
        page.keyboard.press("+")
    page.wait_for_timeout(200)
    box = page.locator("#graph-canvas").bounding_box()
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    page.wait_for_timeout(100)
    before = page.evaluate(DRAWN_RADIUS)
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    scale = page.evaluate("() => window.__graph.scale")
    for _ in range(5):  # five wheel notches in
        page.mouse.wheel(0, -120)
        page.wait_for_timeout(30)
    page.wait_for_timeout(400)  # the full redraw once the wheel rests
    assert page.evaluate("() => window.__graph.scale") > 2 * scale
    page.mouse.move(box["x"] + 2, box["y"] + 2)  # no hover ring over what is measured
    page.wait_for_timeout(100)
    after = page.evaluate(DRAWN_RADIUS)
    assert 1 <= before["radius"] <= 7 and 1 <= after["radius"] <= 7  # never a huge disc
    if before["id"] == after["id"]:
        assert abs(after["radius"] - before["radius"]) <= 1
    assert page.js_errors == []


def test_the_strength_filter_hides_orphans_with_their_edges(page, ui_server, large):
    open_big_canvas(page, ui_server, large)
    page.locator("#min-strength").fill("4")
    page.wait_for_function("() => window.__graph.minStrength === 4")
    result = page.evaluate("""() => {
      const g = window.__graph, linked = new Set();
      for (const e of g.edges) if (g.edgeShown(e)) { linked.add(e.s); linked.add(e.t); }
      const shown = g.visibleNodes();
      return { shown: shown.length, orphans: shown.filter((n) => !linked.has(n)).length,
               edges: g.edges.filter((e) => g.edgeShown(e)).length };
    }""")
    assert 0 < result["shown"] < 5000 and result["edges"] > 0
    assert result["orphans"] == 0
    page.wait_for_function("n => window.__graph.stats.drawnNodes <= n", arg=result["shown"])
    assert page.locator("#canvas-status").inner_text().startswith(f"{result['shown']} of 5000 entities")
    screenshot(page, "canvas-5000-strength-4")
    page.locator("#min-strength").fill("1")
    page.wait_for_function("() => window.__graph.visibleNodes().length === 5000")
    assert page.js_errors == []
