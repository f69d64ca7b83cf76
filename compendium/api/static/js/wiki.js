// The wiki's page list: search, filters by kind, topic and recent change, newest or A–Z;
// keyboard: / to search, j/k or arrows to move through the pages, Enter to open one.

import { all, get, query } from "./api.js";
import { clear, formatAgo, h } from "./dom.js";
import { outlineNav } from "./outline.js";
import { go, kbPath } from "./router.js";

const SHOWN = 100; // rows drawn at first; "Show more" adds as many again
const RECENT = { "": "any time", "1": "last 24 hours", "7": "last 7 days", "30": "last 30 days" };

export function kbApi(kb) {
  return `/knowledge-bases/${encodeURIComponent(kb)}`;
}

export async function renderPageList(main, { kb }, params) {
  const state = {
    q: params.get("q") || "",
    kind: params.get("kind") || "",
    topic: params.get("topic") || "",
    recent: params.get("recent") || "",
    sort: params.get("sort") || "title",
  };
  const base = kbApi(kb);
  const [pages, topics] = await Promise.all([
    all(`${base}/pages`, { limit: 500, kind: state.kind || undefined }, { max: 20000 }),
    all(`${base}/topics`, { limit: 500 }).catch(() => []),
  ]);
  const hits = state.q ? await search(base, state.q) : null;

  const form = h("form", { class: "filters", role: "search", onsubmit: apply, onchange: apply },
    h("label", {}, "Search", h("input", { type: "search", name: "q", value: state.q, placeholder: "title, text…" })),
    h("label", {}, "Kind", h("select", { name: "kind" },
      [["", "all kinds"], ["entity", "entities"], ["concept", "concepts"], ["topic", "topics"]].map(([v, t]) =>
        h("option", { value: v, selected: v === state.kind }, t)))),
    h("label", {}, "Topic", h("select", { name: "topic" },
      h("option", { value: "" }, "all topics"),
      topics.map((t) => h("option", { value: t.id, selected: t.id === state.topic }, t.title || t.slug)))),
    h("label", {}, "Changed", h("select", { name: "recent" },
      Object.entries(RECENT).map(([v, t]) => h("option", { value: v, selected: v === state.recent }, t)))),
    h("label", {}, "Order", h("select", { name: "sort" },
      [["title", "A–Z"], ["recent", "recently changed"]].map(([v, t]) => h("option", { value: v, selected: v === state.sort }, t)))),
    h("button", { type: "submit" }, "Apply"));

  const shown = filterPages(pages, hits, topics, state);
  const list = h("ul", { class: "page-list", "aria-label": "Pages" });
  const more = h("button", { type: "button", class: "secondary", onclick: () => draw(list.children.length + SHOWN) }, "Show more");
  const count = h("p", { class: "muted", "aria-live": "polite" });

  function draw(limit) {
    clear(list, shown.slice(0, limit).map((p) => pageRow(kb, p)));
    more.hidden = shown.length <= limit;
    count.textContent = `${shown.length} of ${pages.length} pages`;
  }

  function apply(ev) {
    ev.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    go(kbPath(kb, `wiki${query(data)}`));
  }

  const keys = h("p", { class: "muted keys" }, h("kbd", {}, "/"), " search · ", h("kbd", {}, "j"), " ", h("kbd", {}, "k"),
    " or arrows move · ", h("kbd", {}, "Enter"), " opens · on a page, ", h("kbd", {}, "e"), " edits and ", h("kbd", {}, "Backspace"), " comes back");
  clear(main, h("div", { class: "wiki-layout" }, outlineNav(kb),
    h("div", {}, h("h1", {}, `Wiki · ${kb}`), form, count, keys,
      pages.length ? list : h("p", { class: "muted" }, "No pages yet: start a compile from the Jobs view."), more)));
  draw(SHOWN);

  const onKey = (ev) => {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const inField = ev.target.closest?.("input, textarea, select");
    if (ev.key === "/" && !inField) {
      ev.preventDefault();
      form.querySelector("input[name=q]").focus();
      return;
    }
    const links = [...list.querySelectorAll("li > a")];
    if (!links.length) return;
    const at = links.indexOf(document.activeElement);
    const step = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 }[ev.key];
    if (step && (!inField || (ev.key.startsWith("Arrow") && ev.target.name === "q"))) {
      ev.preventDefault();
      const next = links[Math.max(0, Math.min(links.length - 1, at < 0 ? 0 : at + step))];
      next.focus();
      next.scrollIntoView({ block: "nearest" });
    }
  };
  document.addEventListener("keydown", onKey);
  return () => document.removeEventListener("keydown", onKey);
}

async function search(base, q) {
  // The API's search ranks pages by text and meaning; hits carry the page they belong to.
  try {
    const result = await get(`${base}/search${query({ q, limit: 100 })}`);
    const items = result.items || result;
    const order = new Map();
    for (const hit of items) {
      const slug = hit.kind === "page" ? hit.id : hit.page;
      if (slug && !order.has(slug)) order.set(slug, { rank: order.size, snippet: hit.snippet });
    }
    return order;
  } catch {
    return null; // no search available: fall back to matching titles and summaries
  }
}

export function filterPages(pages, hits, topics, state) {
  let out = pages;
  if (state.q) {
    if (hits) {
      out = out.filter((p) => hits.has(p.slug)).sort((a, b) => hits.get(a.slug).rank - hits.get(b.slug).rank);
    } else {
      const words = state.q.toLowerCase().split(/\s+/).filter(Boolean);
      out = out.filter((p) => {
        const text = `${p.title} ${p.slug} ${p.summary} ${(p.aliases || []).join(" ")}`.toLowerCase();
        return words.every((w) => text.includes(w));
      });
    }
  }
  if (state.topic) {
    const topic = topics.find((t) => t.id === state.topic);
    const members = new Set(topic ? [topic.id, ...topic.members] : []);
    out = out.filter((p) => members.has(p.subject_id) || p.slug === topic?.slug);
  }
  if (state.recent) {
    const since = Date.now() / 1000 - Number(state.recent) * 86400;
    out = out.filter((p) => p.updated_at >= since);
  }
  if (state.sort === "recent") out = [...out].sort((a, b) => b.updated_at - a.updated_at);
  else if (!state.q) out = [...out].sort((a, b) => a.title.localeCompare(b.title));
  return out;
}

function pageRow(kb, p) {
  return h("li", { "data-slug": p.slug },
    h("a", { href: kbPath(kb, `page/${encodeURIComponent(p.slug)}`) }, p.title || p.slug), " ",
    h("span", { class: "badge" }, p.kind),
    p.edited ? [" ", h("span", { class: "badge edited" }, "edited")] : null,
    p.pending_update ? [" ", h("span", { class: "badge" }, "update pending")] : null,
    h("span", { class: "muted" }, ` · changed ${formatAgo(p.updated_at)}`),
    p.summary ? h("span", { class: "summary" }, p.summary) : null);
}
