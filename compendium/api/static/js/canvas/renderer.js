// Draws a large entity graph on one <canvas>: pan, zoom, drag, hit-testing, level of detail.
//
// Nodes and edges are plain objects kept in arrays; nothing is a DOM element. A frame is drawn
// only after something changed (invalidate -> one requestAnimationFrame). Edges of one type are
// stroked as one path and nodes of one type filled as one path, so a frame costs a few dozen
// canvas calls whatever the size of the graph.
//
// Node radii are screen pixels (node.r): zooming spreads nodes apart, it never inflates them.
// Labels go to the most important nodes first, each only where its box overlaps no label
// already placed, so zooming in reveals more of them (level of detail) and none ever overlap.
// Colours of text and highlights come from CSS variables on the canvas (--canvas-ink,
// --canvas-halo, --canvas-select), so the same renderer follows a light or dark theme.

import { SpatialGrid } from "./grid.js";

const PALETTE = [
  "#2f6fdf", "#d9480f", "#2b8a3e", "#ae3ec9", "#c92a2a", "#1098ad",
  "#e67700", "#5f3dc4", "#087f5b", "#a61e4d", "#495057", "#74b816",
];
const CLICK_SLOP = 4; // px a pointer may move and still count as a click
const LABEL_LIMIT = 300; // labels drawn per frame at most
const LABEL_FONT = "12px system-ui, sans-serif";
const LABEL_HEIGHT = 16; // px of a label's box: 12px text and its halo
const MIN_SCALE = 0.02;
const MAX_RADIUS = 6; // px: the largest node
const MAX_SCALE = 12;

export function typeColour(types, type) {
  const i = types.indexOf(type);
  return PALETTE[(i < 0 ? types.length : i) % PALETTE.length];
}

export class GraphCanvas {
  constructor(canvas, handlers = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext("2d");
    this.layer = document.createElement("canvas"); // the last full picture, shifted while panning
    this.layerCtx = this.layer.getContext("2d");
    this.layerCamera = null;
    this.needFull = true;
    this.gesture = false;
    this.handlers = handlers; // onHover(node|null, x, y), onNodeClick(node), onEdgeClick(edge)
    this.nodes = [];
    this.edges = [];
    this.byId = new Map();
    this.pendingEdges = [];
    this.types = [];
    this.groups = []; // root topics of the outline the nodes sit under (node.group)
    this.colourBy = "type"; // or "group": the outline's root topics colour the nodes
    this.edgeTypes = [];
    this.hiddenTypes = new Set();
    this.minStrength = 0;
    this.shown = new Uint8Array(0); // per node index: drawn under the current filters
    this.byImportance = []; // nodes, most important first: the order labels are placed in
    this.labelBoxes = []; // screen boxes of the labels drawn last, {id, x0, y0, x1, y1}
    this.theme = { ink: "#212529", halo: "rgba(255,255,255,0.9)", select: "#212529" };
    this.scale = 1;
    this.tx = 0;
    this.ty = 0;
    this.hovered = null;
    this.selected = null;
    this.highlighted = { nodes: new Set(), edges: new Set() }; // e.g. an answer's evidence
    this.grid = new SpatialGrid();
    this.gridStale = true;
    this.frameRequested = false;
    this.stats = { frames: 0, lastFrameMs: 0, firstDrawAt: 0, drawnNodes: 0, drawnEdges: 0 };
    this.pointer = null;
    this.width = 0;
    this.height = 0;
    this.bindEvents();
    this.resize();
  }

  // ---- data --------------------------------------------------------------------------------

  /** Add nodes {id, label, type, x, y, size (0..1), ...}; edges waiting on them are resolved. */
  addNodes(list) {
    for (const raw of list) {
      if (this.byId.has(raw.id)) continue;
      const node = { ...raw, index: this.nodes.length };
      if (!Number.isFinite(node.x) || !Number.isFinite(node.y)) placeOnSpiral(node);
      node.r = 2 + 4 * Math.max(0, Math.min(1, node.size ?? 0)); // screen px
      this.byId.set(node.id, node);
      this.nodes.push(node);
      if (!this.types.includes(node.type)) this.types.push(node.type);
      if (node.group && !this.groups.includes(node.group)) this.groups.push(node.group);
    }
    this.types.sort();
    this.groups.sort();
    this.recolour();
    this.byImportance = [...this.nodes].sort((a, b) => (b.size ?? 0) - (a.size ?? 0) || (b.degree ?? 0) - (a.degree ?? 0));
    const waiting = this.pendingEdges;
    this.pendingEdges = [];
    this.addEdges(waiting);
    this.gridStale = true;
    this.invalidate();
  }

  /** The colour of a node: its type's, or its root topic's (grey when it has none). */
  colourOf(node) {
    if (this.colourBy !== "group") return typeColour(this.types, node.type);
    return node.group ? typeColour(this.groups, node.group) : "#9aa0a6";
  }

  recolour() {
    for (const node of this.nodes) node.colour = this.colourOf(node);
  }

  /** Colour by "type" or by "group" (the outline's root topics). */
  setColourBy(mode) {
    this.colourBy = mode;
    this.recolour();
    this.needFull = true;
    this.invalidate();
  }

  /** Add edges {id, source, target, type, strength, ...}; unknown endpoints wait for their node. */
  addEdges(list) {
    for (const raw of list) {
      const s = this.byId.get(raw.source);
      const t = this.byId.get(raw.target);
      if (!s || !t) {
        this.pendingEdges.push(raw);
        continue;
      }
      const edge = { ...raw, s, t };
      this.edges.push(edge);
      (s.incident ||= []).push(edge); // highlighting a node walks its own edges, not all of them
      if (t !== s) (t.incident ||= []).push(edge);
      if (!this.edgeTypes.includes(raw.type)) this.edgeTypes.push(raw.type);
    }
    this.edgeTypes.sort();
    this.refreshShown();
    this.invalidate();
  }

  clear() {
    this.nodes = [];
    this.edges = [];
    this.byId.clear();
    this.pendingEdges = [];
    this.types = [];
    this.groups = [];
    this.edgeTypes = [];
    this.hovered = this.selected = null;
    this.gridStale = true;
    this.refreshShown();
    this.invalidate();
  }

  /** Mark a set of node ids and edge ids (drawn over the graph, as the selection is). */
  highlight(nodeIds = [], edgeIds = []) {
    this.highlighted = { nodes: new Set(nodeIds), edges: new Set(edgeIds) };
    this.invalidate();
  }

  setFilter({ hiddenTypes, minStrength }) {
    if (hiddenTypes) this.hiddenTypes = new Set(hiddenTypes);
    if (minStrength !== undefined) this.minStrength = minStrength;
    this.refreshShown();
    if (this.hovered && !this.isShown(this.hovered)) this.hovered = null;
    this.gridStale = true;
    this.invalidate();
  }

  /**
   * Which nodes are drawn: those of a shown type; and when the strength filter is raised above
   * its floor, only those keeping at least one shown relation (an orphan left by the filter is
   * hidden with its edges). The selected node always stays.
   */
  refreshShown() {
    const shown = new Uint8Array(this.nodes.length);
    const filtering = this.minStrength > 1;
    for (const n of this.nodes) shown[n.index] = this.hiddenTypes.has(n.type) ? 0 : filtering ? 0 : 1;
    if (filtering) {
      for (const e of this.edges) {
        if (e.strength < this.minStrength || this.hiddenTypes.has(e.s.type) || this.hiddenTypes.has(e.t.type)) continue;
        shown[e.s.index] = 1;
        shown[e.t.index] = 1;
      }
      if (this.selected && !this.hiddenTypes.has(this.selected.type)) shown[this.selected.index] = 1;
    }
    this.shown = shown;
  }

  isShown(node) {
    return node.index < this.shown.length ? this.shown[node.index] === 1 : !this.hiddenTypes.has(node.type);
  }

  edgeShown(edge) {
    return edge.strength >= this.minStrength && this.isShown(edge.s) && this.isShown(edge.t);
  }

  visibleNodes() {
    return this.nodes.filter((n) => this.isShown(n));
  }

  // ---- camera ------------------------------------------------------------------------------

  resize() {
    const rect = this.canvas.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    this.width = Math.max(1, rect.width);
    this.height = Math.max(1, rect.height);
    this.canvas.width = this.layer.width = Math.round(this.width * dpr);
    this.canvas.height = this.layer.height = Math.round(this.height * dpr);
    this.dpr = dpr;
    this.invalidate();
  }

  fit() {
    const shown = this.visibleNodes();
    if (!shown.length) return;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of shown) {
      x0 = Math.min(x0, n.x); y0 = Math.min(y0, n.y);
      x1 = Math.max(x1, n.x); y1 = Math.max(y1, n.y);
    }
    const pad = 36; // node radii and a margin, in screen px
    const scale = Math.min((this.width - 2 * pad) / (x1 - x0 || 1), (this.height - 2 * pad) / (y1 - y0 || 1));
    this.scale = clamp(scale, MIN_SCALE, MAX_SCALE);
    this.tx = this.width / 2 - ((x0 + x1) / 2) * this.scale;
    this.ty = this.height / 2 - ((y0 + y1) / 2) * this.scale;
    this.invalidate();
  }

  panBy(dx, dy) {
    this.tx += dx;
    this.ty += dy;
    this.cameraMoved();
  }

  zoomAt(factor, sx = this.width / 2, sy = this.height / 2) {
    const next = clamp(this.scale * factor, MIN_SCALE, MAX_SCALE);
    const k = next / this.scale;
    this.tx = sx - (sx - this.tx) * k;
    this.ty = sy - (sy - this.ty) * k;
    this.scale = next;
    this.cameraMoved();
  }

  centreOn(node) {
    this.tx = this.width / 2 - node.x * this.scale;
    this.ty = this.height / 2 - node.y * this.scale;
    this.invalidate();
  }

  toScreen(node) {
    return { x: node.x * this.scale + this.tx, y: node.y * this.scale + this.ty };
  }

  toWorld(sx, sy) {
    return { x: (sx - this.tx) / this.scale, y: (sy - this.ty) / this.scale };
  }

  // ---- hit-testing -------------------------------------------------------------------------

  nodeAt(sx, sy) {
    if (this.gridStale) {
      this.grid.build(this.nodes);
      this.gridStale = false;
    }
    const p = this.toWorld(sx, sy);
    const slop = 3 / this.scale; // small nodes stay clickable when zoomed out
    let best = null;
    let bestD = Infinity;
    for (const n of this.grid.near(p.x, p.y, (MAX_RADIUS + 3) / this.scale)) {
      if (!this.isShown(n)) continue;
      const d = Math.hypot(n.x - p.x, n.y - p.y);
      if (d <= n.r / this.scale + slop && d < bestD) {
        best = n;
        bestD = d;
      }
    }
    return best;
  }

  edgeAt(sx, sy, tolerance = 4) {
    const p = this.toWorld(sx, sy);
    const tol = tolerance / this.scale;
    let best = null;
    let bestD = tol;
    for (const e of this.edges) {
      if (!this.edgeShown(e)) continue;
      const d = segmentDistance(p.x, p.y, e.s.x, e.s.y, e.t.x, e.t.y);
      if (d < bestD) {
        best = e;
        bestD = d;
      }
    }
    return best;
  }

  // ---- drawing -----------------------------------------------------------------------------

  /** Redraw the whole scene on the next frame. */
  invalidate() {
    this.needFull = true;
    this.schedule();
  }

  /**
   * The camera moved. During a gesture (pan, wheel) the last picture is shifted or scaled at once,
   * which costs one image copy whatever the graph's size; the full redraw follows when it settles.
   */
  cameraMoved() {
    if (!this.gesture || !this.layerCamera) {
      this.invalidate();
      return;
    }
    this.schedule();
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      if (!this.pointer) this.gesture = false;
      this.invalidate();
    }, 120);
  }

  schedule() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      this.draw();
    });
  }

  draw() {
    const started = performance.now();
    const full = this.needFull || !this.layerCamera;
    if (full) {
      this.render();
      this.needFull = false;
    }
    this.present();
    const ms = performance.now() - started;
    this.stats.frames += 1;
    this.stats.lastFrameMs = ms;
    this.stats.lastFrameFull = full;
    if (!this.stats.firstDrawAt && this.nodes.length) this.stats.firstDrawAt = performance.now();
    this.handlers.onDraw?.(this.stats);
  }

  /** The scene at the current camera, onto the off-screen layer. */
  render() {
    this.readTheme();
    const { layerCtx: ctx, dpr, scale } = this;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.layer.width, this.layer.height);
    ctx.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * this.tx, dpr * this.ty);
    const view = this.viewport();
    this.stats.drawnEdges = this.drawEdges(view);
    this.stats.drawnNodes = this.drawNodes(view);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.labelBoxes = this.drawLabels();
    this.layerCamera = { scale, tx: this.tx, ty: this.ty };
  }

  readTheme() {
    const style = getComputedStyle(this.canvas);
    const pick = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
    this.theme = {
      ink: pick("--canvas-ink", "#212529"),
      halo: pick("--canvas-halo", "rgba(255,255,255,0.9)"),
      select: pick("--canvas-select", "#212529"),
    };
  }

  /** Copy the layer to the screen, moved and scaled from the camera it was drawn at. */
  present() {
    const { ctx, dpr, layerCamera: drawn } = this;
    const k = this.scale / drawn.scale;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.setTransform(k, 0, 0, k, dpr * (this.tx - drawn.tx * k), dpr * (this.ty - drawn.ty * k));
    ctx.drawImage(this.layer, 0, 0);
    this.drawHighlights();
  }

  viewport() {
    const a = this.toWorld(0, 0);
    const b = this.toWorld(this.width, this.height);
    return { x0: a.x, y0: a.y, x1: b.x, y1: b.y };
  }

  drawEdges(view) {
    const { layerCtx: ctx, scale } = this;
    // Zoomed far out, weak edges are a grey haze: skip them unless the user asked for them.
    const lodStrength = scale < 0.15 && this.edges.length > 2000 ? 2 : 0;
    let drawn = 0;
    ctx.lineWidth = 1 / scale;
    ctx.globalAlpha = scale < 0.3 ? 0.35 : 0.6;
    for (const type of this.edgeTypes) {
      ctx.beginPath();
      for (const e of this.edges) {
        if (e.type !== type || e.strength < lodStrength || !this.edgeShown(e)) continue;
        if (!segmentInView(e, view)) continue;
        ctx.moveTo(e.s.x, e.s.y);
        ctx.lineTo(e.t.x, e.t.y);
        drawn += 1;
      }
      ctx.strokeStyle = edgeColour(this.edgeTypes, type);
      ctx.stroke();
    }
    ctx.globalAlpha = 1;
    return drawn;
  }

  drawNodes(view) {
    const { layerCtx: ctx, scale } = this;
    let drawn = 0;
    const byColour = new Map(); // one path per colour: a fill per colour, not per node
    for (const n of this.nodes) {
      if (!this.isShown(n)) continue;
      const r = n.r / scale;
      if (n.x + r < view.x0 || n.x - r > view.x1 || n.y + r < view.y0 || n.y - r > view.y1) continue;
      if (!byColour.has(n.colour)) byColour.set(n.colour, []);
      byColour.get(n.colour).push(n);
    }
    for (const [colour, list] of byColour) {
      if (!list.length) continue;
      ctx.beginPath();
      for (const n of list) {
        const r = n.r / scale;
        if (n.r < 2) {
          ctx.rect(n.x - r, n.y - r, 2 * r, 2 * r); // a dot: squares are cheaper than arcs
        } else {
          ctx.moveTo(n.x + r, n.y);
          ctx.arc(n.x, n.y, r, 0, 2 * Math.PI);
        }
      }
      ctx.fillStyle = colour;
      ctx.fill();
      drawn += list.length;
    }
    return drawn;
  }

  /**
   * The hovered and selected nodes, their relations and the hovered label, drawn on the screen
   * over the layer: hovering costs an image copy, not a redraw of the whole graph.
   */
  drawHighlights() {
    const { ctx, dpr, scale } = this;
    this.drawMarked();
    const focus = [this.selected, this.hovered].filter((n) => n && this.isShown(n));
    if (!focus.length) return;
    ctx.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * this.tx, dpr * this.ty);
    ctx.beginPath();
    for (const node of focus) {
      for (const e of node.incident || []) {
        if (!this.edgeShown(e)) continue;
        ctx.moveTo(e.s.x, e.s.y);
        ctx.lineTo(e.t.x, e.t.y);
      }
    }
    ctx.lineWidth = 2 / scale;
    ctx.strokeStyle = this.theme.select;
    ctx.stroke();
    for (const [node, colour] of [[this.selected, this.theme.select], [this.hovered, "#f59f00"]]) {
      if (!node || !this.isShown(node)) continue;
      ctx.beginPath();
      ctx.arc(node.x, node.y, (node.r + 2) / scale, 0, 2 * Math.PI);
      ctx.lineWidth = 2.5 / scale;
      ctx.strokeStyle = colour;
      ctx.stroke();
    }
    if (this.hovered && this.isShown(this.hovered)) {
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      const p = this.toScreen(this.hovered);
      ctx.font = `bold ${LABEL_FONT}`;
      ctx.textBaseline = "middle";
      ctx.lineWidth = 3;
      ctx.strokeStyle = this.theme.halo;
      ctx.fillStyle = this.theme.ink;
      const x = p.x + this.hovered.r + 4;
      ctx.strokeText(this.hovered.label, x, p.y);
      ctx.fillText(this.hovered.label, x, p.y);
    }
  }

  /** The highlighted nodes and edges: thick orange strokes and rings, with their labels. */
  drawMarked() {
    const { ctx, dpr, scale } = this;
    const { nodes, edges } = this.highlighted;
    if (!nodes.size && !edges.size) return;
    ctx.setTransform(dpr * scale, 0, 0, dpr * scale, dpr * this.tx, dpr * this.ty);
    ctx.beginPath();
    for (const e of this.edges) {
      if (edges.has(e.id) && this.edgeShown(e)) {
        ctx.moveTo(e.s.x, e.s.y);
        ctx.lineTo(e.t.x, e.t.y);
      }
    }
    ctx.lineWidth = 3 / scale;
    ctx.strokeStyle = "#e8590c";
    ctx.stroke();
    ctx.beginPath();
    for (const id of nodes) {
      const node = this.byId.get(id);
      if (!node || !this.isShown(node)) continue;
      const r = (node.r + 3) / scale; // node.r is in screen px
      ctx.moveTo(node.x + r, node.y);
      ctx.arc(node.x, node.y, r, 0, 2 * Math.PI);
    }
    ctx.lineWidth = 3 / scale;
    ctx.stroke();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = "bold 12px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    ctx.lineWidth = 3;
    for (const id of nodes) {
      const node = this.byId.get(id);
      if (!node || !this.isShown(node)) continue;
      const p = this.toScreen(node);
      const x = p.x + node.r + 5;
      ctx.strokeStyle = "rgba(255,255,255,0.95)";
      ctx.strokeText(node.label, x, p.y);
      ctx.fillStyle = "#7a2e00";
      ctx.fillText(node.label, x, p.y);
    }
  }

  /**
   * Labels of the most important shown nodes on screen, each placed right of its node only if
   * its box overlaps none placed before (a screen grid of 64 px cells finds the neighbours).
   * Returns the boxes drawn: tests and benchmarks measure overlap from them.
   */
  drawLabels() {
    const { layerCtx: ctx } = this;
    ctx.font = LABEL_FONT;
    ctx.textBaseline = "middle";
    ctx.lineWidth = 3;
    ctx.strokeStyle = this.theme.halo;
    ctx.fillStyle = this.theme.ink;
    const cell = 64;
    const cells = new Map();
    const boxes = [];
    const hits = (box) => {
      for (let cx = Math.floor(box.x0 / cell); cx <= Math.floor(box.x1 / cell); cx++) {
        for (let cy = Math.floor(box.y0 / cell); cy <= Math.floor(box.y1 / cell); cy++) {
          for (const other of cells.get(cx * 7919 + cy) || []) {
            if (box.x0 < other.x1 && other.x0 < box.x1 && box.y0 < other.y1 && other.y0 < box.y1) return true;
          }
        }
      }
      return false;
    };
    for (const n of this.byImportance) {
      if (boxes.length >= LABEL_LIMIT) break;
      if (!this.isShown(n) || !n.label) continue;
      const p = this.toScreen(n);
      if (p.x < -200 || p.y < 0 || p.x > this.width || p.y > this.height) continue;
      if (n.labelWidth === undefined) n.labelWidth = ctx.measureText(n.label).width;
      const x0 = p.x + n.r + 3;
      const box = { id: n.id, x0, y0: p.y - LABEL_HEIGHT / 2, x1: x0 + n.labelWidth + 2, y1: p.y + LABEL_HEIGHT / 2 };
      if (box.x1 < 0 || hits(box)) continue;
      for (let cx = Math.floor(box.x0 / cell); cx <= Math.floor(box.x1 / cell); cx++) {
        for (let cy = Math.floor(box.y0 / cell); cy <= Math.floor(box.y1 / cell); cy++) {
          const key = cx * 7919 + cy;
          if (!cells.has(key)) cells.set(key, []);
          cells.get(key).push(box);
        }
      }
      boxes.push(box);
      ctx.strokeText(n.label, x0, p.y);
      ctx.fillText(n.label, x0, p.y);
    }
    return boxes;
  }

  // ---- input -------------------------------------------------------------------------------

  bindEvents() {
    const c = this.canvas;
    c.addEventListener("pointerdown", (ev) => this.onPointerDown(ev));
    c.addEventListener("pointermove", (ev) => this.onPointerMove(ev));
    c.addEventListener("pointerup", (ev) => this.onPointerUp(ev));
    c.addEventListener("pointerleave", () => {
      this.setHovered(null);
      this.handlers.onEdgeHover?.(null);
    });
    c.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const { x, y } = local(c, ev);
      this.gesture = true; // wheel zoom scales the last picture until the wheel rests
      this.zoomAt(Math.exp(-ev.deltaY * 0.0015), x, y);
    }, { passive: false });
    c.addEventListener("keydown", (ev) => this.onKey(ev));
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(c);
  }

  dispose() {
    this.observer.disconnect();
    this.handlers = {};
    this.nodes = [];
    this.edges = [];
  }

  onPointerDown(ev) {
    const { x, y } = local(this.canvas, ev);
    const node = this.nodeAt(x, y);
    this.pointer = { x, y, startX: x, startY: y, node, moved: false };
    this.gesture = !node; // panning shifts the picture; dragging a node redraws it
    this.canvas.setPointerCapture?.(ev.pointerId);
    this.canvas.focus({ preventScroll: true });
  }

  onPointerMove(ev) {
    const { x, y } = local(this.canvas, ev);
    const p = this.pointer;
    if (!p) {
      const node = this.nodeAt(x, y);
      this.setHovered(node, x, y);
      if (!node) this.hoverEdge(x, y);
      return;
    }
    if (Math.hypot(x - p.startX, y - p.startY) > CLICK_SLOP) p.moved = true;
    if (p.node) {
      p.node.x += (x - p.x) / this.scale;
      p.node.y += (y - p.y) / this.scale;
      this.gridStale = true;
      this.invalidate();
    } else {
      this.panBy(x - p.x, y - p.y);
    }
    p.x = x;
    p.y = y;
  }

  onPointerUp(ev) {
    const p = this.pointer;
    this.pointer = null;
    if (this.gesture) {
      this.gesture = false;
      clearTimeout(this.settleTimer);
      this.invalidate();
    }
    if (!p || p.moved) return;
    const { x, y } = local(this.canvas, ev);
    if (p.node) {
      this.select(p.node);
      this.handlers.onNodeClick?.(p.node, ev);
      return;
    }
    const edge = this.edgeAt(x, y);
    if (edge) this.handlers.onEdgeClick?.(edge, ev);
  }

  onKey(ev) {
    const step = 60;
    const keys = {
      ArrowLeft: () => this.panBy(step, 0),
      ArrowRight: () => this.panBy(-step, 0),
      ArrowUp: () => this.panBy(0, step),
      ArrowDown: () => this.panBy(0, -step),
      "+": () => this.zoomAt(1.25),
      "=": () => this.zoomAt(1.25),
      "-": () => this.zoomAt(0.8),
      "0": () => this.fit(),
      Enter: () => this.selected && this.handlers.onNodeClick?.(this.selected, ev),
    };
    const action = keys[ev.key];
    if (action) {
      ev.preventDefault();
      action();
    }
  }

  /** Relations under the pointer name their type and strength; tested at most every 50 ms. */
  hoverEdge(x, y) {
    const now = performance.now();
    if (now - (this.lastEdgeTest || 0) < 50) return;
    this.lastEdgeTest = now;
    const edge = this.edgeAt(x, y);
    this.canvas.style.cursor = edge ? "pointer" : "grab";
    this.handlers.onEdgeHover?.(edge, x, y);
  }

  setHovered(node, x = 0, y = 0) {
    if (node !== this.hovered) {
      this.hovered = node;
      this.canvas.style.cursor = node ? "pointer" : "grab";
      this.schedule();
    }
    this.handlers.onHover?.(node, x, y);
  }

  select(node) {
    this.selected = node;
    this.schedule();
  }
}

function local(el, ev) {
  const rect = el.getBoundingClientRect();
  return { x: ev.clientX - rect.left, y: ev.clientY - rect.top };
}

function clamp(v, lo, hi) {
  return Math.max(lo, Math.min(hi, v));
}

function edgeColour(types, type) {
  // Edge colours are muted versions of the palette, so nodes stay in front.
  return typeColour(types, type) + "99";
}

function segmentInView(e, v) {
  const x0 = Math.min(e.s.x, e.t.x), x1 = Math.max(e.s.x, e.t.x);
  const y0 = Math.min(e.s.y, e.t.y), y1 = Math.max(e.s.y, e.t.y);
  return x1 >= v.x0 && x0 <= v.x1 && y1 >= v.y0 && y0 <= v.y1;
}

function segmentDistance(px, py, ax, ay, bx, by) {
  const dx = bx - ax, dy = by - ay;
  const len = dx * dx + dy * dy;
  const t = len ? clamp(((px - ax) * dx + (py - ay) * dy) / len, 0, 1) : 0;
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

function placeOnSpiral(node) {
  // Nodes the server sent without a position still get a stable, non-overlapping place.
  const i = node.index + 1;
  const angle = i * 2.39996; // the golden angle
  node.x = 20 * Math.sqrt(i) * Math.cos(angle);
  node.y = 20 * Math.sqrt(i) * Math.sin(angle);
}
