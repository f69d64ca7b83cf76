// The Ask view: a question, the answer as it streams with clickable citations, the evidence
// list, and the evidence subgraph highlighted on a canvas of its neighbourhood.

import { ApiError, get, query } from "./api.js";
import { go, kbPath } from "./router.js";
import { GraphCanvas } from "./canvas/renderer.js";
import { showPassage } from "./citations.js";
import { clear, h } from "./dom.js";
import { openPanel } from "./panel.js";
import { session } from "./session.js";
import { kbApi } from "./wiki.js";

const CITATION = /\[((?:[ERPTC]\d+)(?:\s*[,;]\s*[ERPTC]\d+)*)\]/g;
const KIND_NAMES = { chunk: "Passage", entity: "Entity", relation: "Relation", page: "Page", topic: "Topic" };

/** POST `body` to `path` and yield each NDJSON event of the answer stream. */
async function* events(path, body, signal) {
  const headers = { "Content-Type": "application/json", Accept: "application/x-ndjson" };
  if (session.key) headers.Authorization = `Bearer ${session.key}`;
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), signal });
  if (!response.ok || !response.body) {
    const data = await response.json().catch(() => null);
    const err = data?.error || {};
    if (response.status === 401) window.dispatchEvent(new CustomEvent("compendium:unauthorized"));
    throw new ApiError(response.status, err.code || "http_error", err.message || response.statusText, err.field);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, cut).trim();
      buffer = buffer.slice(cut + 1);
      if (line) yield JSON.parse(line);
    }
    if (done) break;
  }
}

export async function renderAsk(main, { kb }, params) {
  const base = kbApi(kb);
  const question = h("textarea", { id: "ask-question", rows: 2, maxlength: 2000, required: true },
    params.get("q") || "");
  const mode = h("select", { id: "ask-mode" },
    ["hybrid", "local", "global"].map((m) => h("option", { value: m }, m)));
  const submit = h("button", { type: "submit" }, "Ask");
  const status = h("p", { id: "ask-status", class: "muted", "aria-live": "polite" });
  const answer = h("div", { id: "ask-answer", class: "answer", "aria-live": "polite" });
  const sources = h("ol", { id: "ask-sources", class: "ask-sources" });
  const canvas = h("canvas", { id: "ask-graph", tabindex: "0", role: "img",
    "aria-label": "The entities and relations the answer used, highlighted in their neighbourhood" });
  const graph = new GraphCanvas(canvas, {
    onNodeClick: (node) => node.page && go(kbPath(kb, `page/${encodeURIComponent(node.page)}`)),
  });
  window.__askGraph = graph; // for tests: what is highlighted
  let controller = null;
  let refs = {};
  let evidence = null;

  clear(main,
    h("h1", {}, `Ask · ${kb}`),
    h("form", { class: "ask-form", onsubmit: (ev) => { ev.preventDefault(); run(); } },
      h("label", { for: "ask-question" }, "Question"), question,
      h("div", { class: "toolbar" }, h("label", { for: "ask-mode" }, "Mode"), mode, submit)),
    status,
    answer,
    h("section", { class: "ask-evidence" },
      h("h2", {}, "Evidence"), sources,
      h("div", { class: "canvas-wrap ask-canvas" }, canvas)));
  graph.resize();

  function cite(label, sentence) {
    const ref = refs[label];
    return h("button", {
      type: "button", class: "cite", "data-ref": label, title: ref ? `${KIND_NAMES[ref.kind]} ${label}` : label,
      onclick: () => openRef(label, sentence),
    }, label);
  }

  /** Answer text with its [C1] groups turned into buttons that open the evidence. */
  function withCitations(text) {
    const out = [];
    let last = 0;
    for (const match of text.matchAll(CITATION)) {
      out.push(text.slice(last, match.index), "[");
      match[1].split(/\s*[,;]\s*/).forEach((label, i) => out.push(i ? ", " : "", cite(label, text)));
      out.push("]");
      last = match.index + match[0].length;
    }
    out.push(text.slice(last));
    return out;
  }

  function openRef(label, sentence) {
    const ref = refs[label];
    if (!ref) return;
    if (ref.kind === "chunk") {
      showPassage(kb, ref.id, sentence, `Passage ${label}`);
      return;
    }
    const item = describe(label);
    openPanel(`${KIND_NAMES[ref.kind]} ${label}`,
      h("p", {}, h("strong", {}, item.name || item.title || ref.id), item.type ? ` · ${item.type}` : ""),
      item.description ? h("p", {}, item.description) : null,
      item.page || item.slug
        ? h("p", {}, h("a", { href: kbPath(kb, `page/${encodeURIComponent(item.page || item.slug)}`) }, "Open its page"))
        : null);
  }

  function describe(label) {
    const list = { E: "entities", R: "relations", P: "pages", T: "topics", C: "chunks" }[label[0]];
    return evidence?.[list]?.[Number(label.slice(1)) - 1] || {};
  }

  function showSources(final) {
    clear(sources, final.citations.map((c) => h("li", {},
      cite(c.ref, final.answer), " ",
      c.kind === "chunk"
        ? [c.document, ...(c.heading_path || [])].filter(Boolean).join(" › ")
        : `${KIND_NAMES[c.kind]}: ${c.name || c.title || c.id}`)));
  }

  async function showSubgraph(data) {
    const entityIds = data.entities.map((e) => e.id);
    const relationIds = data.relations.map((r) => r.id);
    graph.clear();
    if (entityIds.length) {
      try {
        const around = await get(`${base}/graph${query({ entity: entityIds[0], depth: 1, limit: 300 })}`);
        const spread = 40 * Math.sqrt(Math.max(1, around.nodes.length));
        graph.addNodes(around.nodes.map((n) => ({ ...n, x: n.x * spread, y: n.y * spread, size: n.importance })));
        graph.addEdges(around.edges);
      } catch {
        // the neighbourhood is context only: the evidence is drawn without it
      }
    }
    graph.addNodes(data.entities.map((e) => ({ id: e.id, label: e.name, type: e.type, page: e.page, size: 0.5 })));
    graph.addEdges(data.relations
      .filter((r) => graph.byId.has(r.source) && graph.byId.has(r.target) && !graph.edges.some((e) => e.id === r.id))
      .map((r) => ({ ...r })));
    graph.highlight(entityIds, relationIds);
    graph.fit();
    canvas.dataset.ready = "true";
  }

  async function run() {
    const text = question.value.trim();
    if (!text) return;
    controller?.abort();
    controller = new AbortController();
    const mine = controller;
    refs = {};
    evidence = null;
    window.__askEvents = [];
    submit.disabled = true;
    delete answer.dataset.done;
    delete canvas.dataset.ready;
    clear(answer);
    clear(sources);
    status.textContent = "Finding the evidence…";
    // Checked sentences stand; the model's tokens since the last one are a muted draft that a
    // retraction (a sentence failing its check) removes.
    const kept = [];
    const notes = [];
    let draft = "";
    const draw = () => clear(answer,
      ...notes.map((note) => h("p", { class: "muted note" }, note)),
      h("p", {}, withCitations(kept.join(" ")), draft ? h("span", { class: "muted draft" }, ` ${draft}`) : false));
    try {
      for await (const event of events(`${base}/ask`, { question: text, mode: mode.value }, mine.signal)) {
        window.__askEvents.push(event.type);
        if (event.type === "stage" && event.stage === "answer") {
          refs = event.refs || {};
          status.textContent = `Writing the answer from ${Object.keys(refs).length} pieces of evidence…`;
        } else if (event.type === "note") {
          notes.push(event.message);
          draw();
        } else if (event.type === "delta") {
          draft += event.text;
          draw();
        } else if (event.type === "sentence") {
          kept.push(event.text);
          draft = "";
          draw();
        } else if (event.type === "retract") {
          draft = "";
          draw();
        } else if (event.type === "final") {
          evidence = event.evidence;
          clear(answer, ...notes.map((note) => h("p", { class: "muted note" }, note)), event.answer
            ? h("p", {}, withCitations(event.answer))
            : h("p", { class: "muted" }, "No passage of the knowledge base answers this."));
          answer.dataset.done = "true";
          status.textContent = `${event.citations.length} sources cited.`;
          showSources(event);
          await showSubgraph(event.evidence);
        } else if (event.type === "error") {
          clear(answer, h("p", { class: "error", role: "alert" }, event.message));
          answer.dataset.done = "error";
          status.textContent = "";
        }
      }
    } catch (exc) {
      if (exc.name === "AbortError") return;
      clear(answer, h("p", { class: "error", role: "alert" }, `The answer failed: ${exc.message}`));
      answer.dataset.done = "error";
    } finally {
      if (mine === controller) submit.disabled = false;
    }
  }

  if (question.value) run();
  return () => {
    controller?.abort();
    graph.dispose();
    if (window.__askGraph === graph) window.__askGraph = null;
  };
}
