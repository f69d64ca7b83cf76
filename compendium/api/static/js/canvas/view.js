// The entity canvas view: fetches the graph in pages, legend and filters, hover, click-through.

import { get, query } from "../api.js";
import { showPassage } from "../citations.js";
import { clear, h } from "../dom.js";
import { openPanel } from "../panel.js";
import { go, kbPath } from "../router.js";
import { kbApi } from "../wiki.js";
import { GraphCanvas, typeColour } from "./renderer.js";

const PAGE_NODES = 1000; // nodes per request: the first page is drawn while the rest loads
const WORLD_PER_NODE = 40; // world units of layout span per sqrt(node): keeps nodes apart

export async function renderCanvas(main, { kb }, params) {
  const focus = params.get("focus") || "";
  const depth = Number(params.get("depth") || 2);
  const base = kbApi(kb);
  const canvas = h("canvas", {
    id: "graph-canvas", tabindex: "0", role: "application",
    "aria-label": "Entity graph. Drag to pan, wheel or + and − to zoom, 0 to fit, arrows to move, Enter opens the selected entity.",
  });
  const tooltip = h("div", { class: "tooltip", role: "tooltip", id: "graph-tooltip", hidden: true });
  const status = h("div", { class: "canvas-status", "aria-live": "polite", id: "canvas-status" }, "Loading the graph…");
  const legend = h("fieldset", { id: "type-filter" }, h("legend", {}, "Types shown"));
  const groupLegend = h("div", { id: "group-legend", class: "legend-groups", hidden: true });
  const colourBy = h("select", { id: "colour-by" },
    h("option", { value: "type" }, "type"), h("option", { value: "group" }, "outline topic"));
  const strength = h("input", { id: "min-strength", type: "number", min: 1, value: 1, step: 1, size: 4 });
  const findInput = h("input", { id: "find-entity", type: "search", list: "entity-names", placeholder: "name…", size: 18 });
  const names = h("datalist", { id: "entity-names" });
  const depthSelect = h("select", { id: "depth" }, [1, 2, 3, 4].map((d) => h("option", { value: d, selected: d === depth }, String(d))));

  const graph = new GraphCanvas(canvas, {
    onHover: (node, x, y) => hover(node, x, y),
    onNodeClick: (node) => openNode(node),
    onEdgeClick: (edge) => openRelation(edge),
    onEdgeHover: (edge, x, y) => hoverEdge(edge, x, y),
    onDraw: (stats) => { window.__canvasStats = stats; },
  });
  window.__graph = graph; // for the benchmark and tests: frame stats and camera
  const onTheme = () => graph.invalidate(); // redraw in the new theme's colours
  window.addEventListener("compendium-theme", onTheme);

  clear(main,
    h("div", { class: "canvas-bar" },
      h("h1", { class: "visually-hidden" }, `Entity canvas · ${kb}`),
      h("form", { class: "toolbar", role: "search", onsubmit: (ev) => { ev.preventDefault(); find(findInput.value); } },
        h("label", { for: "find-entity" }, "Find"), findInput, names,
        h("button", { type: "submit", class: "secondary" }, "Find")),
      legend,
      h("label", { for: "colour-by" }, "Colour by", colourBy),
      h("label", { for: "min-strength" }, "Minimum strength", strength),
      focus ? h("label", { for: "depth" }, "Depth", depthSelect) : null,
      h("div", { class: "toolbar" },
        h("button", { type: "button", class: "secondary", onclick: () => graph.fit() }, "Fit"),
        focus ? h("button", { type: "button", class: "secondary", onclick: () => go(kbPath(kb, "canvas")) }, "Whole graph") : null)),
    groupLegend,
    h("div", { class: "canvas-wrap" }, canvas, tooltip, status));
  colourBy.addEventListener("change", () => {
    graph.setColourBy(colourBy.value);
    drawLegend();
  });
  graph.resize();

  strength.addEventListener("input", () => {
    const min = Number(strength.value) || 0;
    graph.setFilter({ minStrength: min });
    if (canvas.dataset.ready) {
      const shown = graph.visibleNodes().length;
      status.textContent = min > 1
        ? `${shown} of ${graph.nodes.length} entities keep a relation of strength ${min} or more; the others are hidden`
        : `${graph.nodes.length} entities, ${graph.edges.length} relations`;
    }
  });
  depthSelect.addEventListener("change", () =>
    go(kbPath(kb, `canvas${query({ focus, depth: depthSelect.value })}`)));

  let cancelled = false;
  let scale = 1;
  let maxImportance = 0;
  let fitted = false;
  let userMoved = false;
  canvas.addEventListener("pointerdown", () => (userMoved = true));
  canvas.addEventListener("wheel", () => (userMoved = true), { passive: true });

  const describe = new Map(); // entity id -> description (fetched on first hover)
  let hoverTimer = 0;
  let hoveredEdge = null;

  function toNodes(list) {
    if (!maxImportance) maxImportance = Math.max(1e-9, ...list.map((n) => n.importance));
    return list.map((n) => ({
      ...n, x: n.x * scale, y: n.y * scale, size: Math.min(1, n.importance / maxImportance),
    }));
  }

  async function load() {
    let cursor = null;
    let loaded = 0;
    do {
      const page = await get(`${base}/graph${query({
        limit: PAGE_NODES, cursor, entity: focus || undefined, depth: focus ? depth : undefined,
      })}`);
      if (cancelled) return;
      if (!loaded) scale = WORLD_PER_NODE * Math.sqrt(Math.max(1, page.total_nodes)) / 2;
      graph.addNodes(toNodes(page.nodes));
      graph.addEdges(page.edges);
      loaded += page.nodes.length;
      if (!fitted || !userMoved) {
        graph.fit();
        fitted = true;
      }
      status.textContent = `${loaded} of ${page.total_nodes} entities, ${graph.edges.length} relations`
        + (page.next_cursor ? " · loading…" : "") + (page.truncated ? " (some relations left out)" : "");
      drawLegend();
      cursor = page.next_cursor;
    } while (cursor && !cancelled);
    if (focus) {
      const centre = graph.byId.get(focus);
      if (centre) graph.select(centre);
    }
    fillNames();
    canvas.dataset.ready = "true";
  }

  function drawLegend() {
    const counts = new Map();
    for (const n of graph.nodes) counts.set(n.type, (counts.get(n.type) || 0) + 1);
    clear(legend, h("legend", {}, "Types shown"), graph.types.map((type) => {
      const box = h("input", { type: "checkbox", name: "type", value: type, checked: !graph.hiddenTypes.has(type) });
      box.addEventListener("change", () => {
        const hidden = new Set(graph.hiddenTypes);
        if (box.checked) hidden.delete(type);
        else hidden.add(type);
        graph.setFilter({ hiddenTypes: hidden });
      });
      return h("label", { class: "legend-item" }, box,
        graph.colourBy === "type"
          ? h("span", { class: "legend-swatch", style: { background: typeColour(graph.types, type) }, "aria-hidden": "true" }) : null,
        `${type || "untyped"} (${counts.get(type)})`);
    }));
    // Colouring by the outline: which colour is which root topic (the layout groups them too).
    const byGroup = new Map();
    for (const n of graph.nodes) if (n.group) byGroup.set(n.group, (byGroup.get(n.group) || 0) + 1);
    groupLegend.hidden = graph.colourBy !== "group";
    clear(groupLegend, graph.groups.map((g) => h("span", { class: "group-item" },
      h("span", { class: "legend-swatch", style: { background: typeColour(graph.groups, g) }, "aria-hidden": "true" }),
      `${g} (${byGroup.get(g) || 0})`)));
  }

  function fillNames() {
    // The 500 most important names are enough for the suggestion list; any name can be typed.
    const top = [...graph.nodes].sort((a, b) => b.importance - a.importance).slice(0, 500);
    clear(names, top.map((n) => h("option", { value: n.label })));
  }

  function find(text) {
    const wanted = text.trim().toLowerCase();
    if (!wanted) return;
    const node = graph.nodes.find((n) => n.label.toLowerCase() === wanted)
      || graph.nodes.find((n) => n.label.toLowerCase().includes(wanted));
    if (!node) {
      status.textContent = `No entity named “${text}” on the canvas.`;
      return;
    }
    if (graph.hiddenTypes.has(node.type)) {
      graph.setFilter({ hiddenTypes: [...graph.hiddenTypes].filter((t) => t !== node.type) });
      drawLegend();
    }
    graph.select(node);
    graph.zoomAt(Math.max(1, graph.scale) / graph.scale);
    graph.centreOn(node);
    canvas.focus();
    status.textContent = `${node.label} (${node.type}) selected: press Enter to open it.`;
  }

  function hover(node, x, y) {
    clearTimeout(hoverTimer);
    if (!node) {
      if (!hoveredEdge) tooltip.hidden = true; // an edge's tooltip stays until the pointer leaves it
      return;
    }
    const show = () => {
      clear(tooltip, h("strong", {}, node.label), ` · ${node.type}`,
        describe.has(node.id) ? h("div", {}, describe.get(node.id) || "No description.") : h("div", { class: "muted" }, "…"));
      place(x, y);
    };
    show();
    if (!describe.has(node.id)) {
      hoverTimer = setTimeout(async () => {
        try {
          const entity = await get(`${base}/entities/${encodeURIComponent(node.id)}`);
          describe.set(node.id, entity.description);
        } catch {
          describe.set(node.id, "");
        }
        if (graph.hovered === node) show();
      }, 120);
    }
  }

  function hoverEdge(edge, x, y) {
    hoveredEdge = edge;
    if (!edge) {
      if (!graph.hovered) tooltip.hidden = true;
      return;
    }
    clear(tooltip, h("strong", {}, `${edge.s.label} → ${edge.t.label}`),
      h("div", {}, `${edge.type || "related"} · strength ${edge.strength} · click for the passages`));
    place(x, y);
  }

  function place(x, y) {
    tooltip.style.left = `${Math.min(x + 14, canvas.clientWidth - 300)}px`;
    tooltip.style.top = `${y + 14}px`;
    tooltip.hidden = false;
  }

  function openNode(node) {
    if (node.page) {
      go(kbPath(kb, `page/${encodeURIComponent(node.page)}`));
      return;
    }
    openPanel(node.label,
      h("p", {}, h("span", { class: "badge" }, node.type), " has no page yet."),
      h("p", {}, h("a", { href: kbPath(kb, `canvas${query({ focus: node.id, depth: 2 })}`) }, "Show its neighbourhood")));
  }

  async function openRelation(edge) {
    openPanel(`${edge.s.label} → ${edge.t.label}`, h("p", { class: "loading" }, "Loading…"));
    try {
      const relation = await get(`${base}/relations/${encodeURIComponent(edge.id)}`);
      openPanel(`${edge.s.label} → ${edge.t.label}`,
        h("p", {}, h("span", { class: "badge" }, relation.type), ` strength ${relation.strength}`),
        relation.description ? h("p", {}, relation.description) : null,
        h("h3", {}, "Supporting passages"),
        h("ul", {}, relation.chunk_ids.map((chunk, i) => h("li", {},
          h("a", { href: "#", onclick: (ev) => {
            ev.preventDefault();
            showPassage(kb, chunk, relation.description || `${edge.s.label} ${edge.t.label}`, `Passage ${i + 1} · ${relation.type}`);
          } }, `Passage ${i + 1}`)))));
    } catch (exc) {
      openPanel("Relation", h("p", { class: "error" }, exc.message));
    }
  }

  load().catch((exc) => {
    status.textContent = `The graph cannot be loaded: ${exc.message}`;
  });
  return () => {
    cancelled = true;
    clearTimeout(hoverTimer);
    window.removeEventListener("compendium-theme", onTheme);
    graph.dispose();
    if (window.__graph === graph) window.__graph = null;
  };
}
