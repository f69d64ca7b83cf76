// The outline navigator beside the wiki: the topic tree folded, the current page's branch open.

import { get } from "./api.js";
import { clear, h } from "./dom.js";
import { kbPath } from "./router.js";

const FRESH_MS = 30000; // the tree changes only with a compile: one fetch serves a few views
const loaded = new Map(); // kb -> {at, promise}

function fetchOutline(kb) {
  const known = loaded.get(kb);
  if (known && Date.now() - known.at < FRESH_MS) return known.promise;
  const promise = get(`/knowledge-bases/${encodeURIComponent(kb)}/outline`);
  loaded.set(kb, { at: Date.now(), promise });
  promise.catch(() => loaded.delete(kb));
  return promise;
}

function total(node) {
  return node.pages.length + node.children.reduce((n, c) => n + total(c), 0);
}

// The chain of nodes from a root topic down to the node listing (or being) the page.
function trailTo(nodes, slug) {
  for (const node of nodes) {
    if (node.slug === slug || node.pages.includes(slug)) return [node];
    const below = trailTo(node.children, slug);
    if (below) return [node, ...below];
  }
  return null;
}

function pageLink(kb, slug, text, current) {
  return h("a", { href: kbPath(kb, `page/${encodeURIComponent(slug)}`), "aria-current": slug === current ? "page" : null }, text);
}

function drawNode(kb, node, titles, current, open) {
  const details = h("details", { open: open.has(node) });
  const label = node.slug ? pageLink(kb, node.slug, node.title, current) : h("span", {}, node.title);
  const summary = h("summary", {}, label, " ", h("span", { class: "count" }, String(total(node))));
  let filled = false;
  const fill = () => {
    // Children are drawn when a node is first opened: a 5,000-page tree stays a small DOM.
    if (filled || !details.open) return;
    filled = true;
    if (node.children.length) {
      details.append(h("ul", { class: "outline-nodes" }, node.children.map((c) => h("li", {}, drawNode(kb, c, titles, current, open)))));
    }
    if (node.pages.length) {
      details.append(h("ul", { class: "outline-pages" }, node.pages.map((s) => h("li", {}, pageLink(kb, s, titles[s] || s, current)))));
    }
  };
  details.addEventListener("toggle", fill);
  details.append(summary);
  fill();
  return details;
}

/** An <aside> that fills itself with the knowledge base's outline; `current` is the open page's slug. */
export function outlineNav(kb, current = null) {
  const aside = h("aside", { class: "outline-nav", "aria-label": "Outline" },
    h("h2", {}, "Outline"), h("p", { class: "muted" }, "…"));
  fetchOutline(kb).then(({ outline, titles }) => {
    const roots = outline.children;
    if (!roots.length) {
      clear(aside, h("h2", {}, "Outline"), h("p", { class: "muted" }, "No pages yet."));
      return;
    }
    const open = new Set(current ? trailTo(roots, current) || [] : []);
    clear(aside, h("h2", {}, "Outline"),
      h("ul", { class: "outline-nodes" }, roots.map((r) => h("li", {}, drawNode(kb, r, titles, current, open)))));
    aside.querySelector("[aria-current=page]")?.scrollIntoView?.({ block: "nearest" });
  }).catch(() => clear(aside, h("h2", {}, "Outline"), h("p", { class: "muted" }, "The outline could not be loaded.")));
  return aside;
}
