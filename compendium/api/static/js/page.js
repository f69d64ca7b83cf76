// One wiki page: rendered body, citations to their passages, aliases, related pages, history, edit.

import { ApiError, get, getText, put } from "./api.js";
import { showPassage } from "./citations.js";
import { announce, clear, formatTime, h, sanitisedFragment } from "./dom.js";
import { go, kbPath } from "./router.js";
import { kbApi } from "./wiki.js";

export async function renderPage(main, { kb, slug }) {
  const base = `${kbApi(kb)}/pages/${encodeURIComponent(slug)}`;
  const [page, html] = await Promise.all([get(base), getText(`${base}/html`)]);
  const body = h("div", { class: "page-body", id: "page-body" }, sanitisedFragment(html));
  wireLinks(kb, page, body);
  const related = h("section", { "aria-labelledby": "related-title" }, h("h2", { id: "related-title" }, "Related pages"), h("p", { class: "muted" }, "…"));
  const history = h("section", { "aria-labelledby": "history-title" }, h("h2", { id: "history-title" }, "History"), h("p", { class: "muted" }, "…"));
  const canvasLink = page.subject_id && page.kind !== "topic"
    ? h("a", { href: kbPath(kb, `canvas?focus=${encodeURIComponent(page.subject_id)}&depth=2`) }, "Show on the canvas") : null;

  clear(main,
    h("p", {}, h("a", { href: kbPath(kb, "wiki") }, "← All pages")),
    h("div", { class: "page-layout" },
      h("article", { "aria-labelledby": "page-title" },
        h("h1", { id: "page-title" }, page.title || page.slug),
        h("div", { class: "toolbar" },
          h("span", { class: "badge" }, page.kind),
          page.edited ? h("span", { class: "badge edited", title: "A person edited this page; compiles do not overwrite it" }, "edited") : null,
          page.pending_update ? h("span", { class: "badge" }, "new evidence waiting") : null,
          h("span", { class: "muted" }, `version ${page.version} · changed ${formatTime(page.updated_at)}`),
          h("a", { href: kbPath(kb, `page/${encodeURIComponent(slug)}/edit`), class: "button", id: "edit-page" }, "Edit"),
          canvasLink),
        body),
      h("aside", { class: "page-meta", "aria-label": "About this page" },
        h("section", { "aria-labelledby": "aliases-title" },
          h("h2", { id: "aliases-title" }, "Also known as"),
          page.aliases?.length ? h("ul", { class: "aliases" }, page.aliases.map((a) => h("li", {}, a))) : h("p", { class: "muted" }, "No aliases.")),
        related, history)),
  );
  loadRelated(kb, base, related);
  loadHistory(kb, base, page, history);
  return null;
}

/** Wikilinks become hash routes; footnote references open their passage in the side panel. */
function wireLinks(kb, page, body) {
  const notes = new Map(); // footnote anchor -> chunk id
  body.querySelectorAll(".footnotes li[id]").forEach((li, i) => {
    const text = li.textContent.replace("↩", "").trim();
    const chunk = /chunk\s+(\S+)\s*$/.exec(text)?.[1] || page.cited_chunks?.[i];
    if (chunk) notes.set(li.id, chunk);
    li.querySelector("a.footnote-back")?.remove(); // its '#fnref' target is not a route here
    if (chunk) {
      const label = li.firstChild?.textContent || text;
      li.replaceChildren(h("a", {
        href: "#", class: "citation", "data-chunk": chunk,
        onclick: (ev) => { ev.preventDefault(); showPassage(kb, chunk, "", label.trim()); },
      }, text));
    }
  });
  for (const a of body.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href");
    const wiki = /^(?:\.\.\/)?([^/?#]+)\/html$/.exec(href);
    if (wiki) {
      a.setAttribute("href", kbPath(kb, `page/${encodeURIComponent(decodeURIComponent(wiki[1]))}`));
      a.classList.add("wikilink");
    } else if (href.startsWith("#fn-")) {
      const chunk = notes.get(href.slice(1));
      a.classList.add("citation");
      a.setAttribute("aria-label", `Source ${a.textContent}`);
      if (chunk) a.dataset.chunk = chunk;
      a.addEventListener("click", (ev) => {
        ev.preventDefault();
        if (chunk) showPassage(kb, chunk, citingSentence(a), `Source ${a.textContent}`);
      });
    } else if (href.startsWith("#")) {
      a.removeAttribute("href"); // in-page anchors would fight the router
    } else {
      a.setAttribute("rel", "noopener noreferrer nofollow");
      a.setAttribute("target", "_blank");
    }
  }
}

/** The text of the sentence a footnote reference ends. */
function citingSentence(ref) {
  const block = ref.closest("p, li, td, blockquote") || ref.parentElement;
  const before = [];
  const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (ref.contains(node)) break;
    if (!node.parentElement.closest("sup")) before.push(node.data);
  }
  const text = before.join("");
  const sentences = text.split(/(?<=[.!?])\s+/).filter((s) => s.trim());
  return sentences.at(-1) || text;
}

async function loadRelated(kb, base, box) {
  try {
    const related = await get(`${base}/related`);
    const items = related.items || [];
    clear(box, h("h2", { id: "related-title" }, "Related pages"),
      items.length ? h("ul", { class: "related" }, items.map((r) => h("li", {},
        h("a", { href: kbPath(kb, `page/${encodeURIComponent(r.slug)}`) }, r.title || r.slug),
        r.via ? h("span", { class: "muted" }, ` · ${r.via}`) : null)))
        : h("p", { class: "muted" }, "None yet."));
  } catch (exc) {
    clear(box, h("h2", { id: "related-title" }, "Related pages"), h("p", { class: "muted" }, exc.message));
  }
}

async function loadHistory(kb, base, page, box) {
  let data;
  try {
    data = await get(`${base}/history`);
  } catch (exc) {
    clear(box, h("h2", { id: "history-title" }, "History"), h("p", { class: "muted" }, exc.message));
    return;
  }
  const diffBox = h("div", { id: "page-diff" });
  clear(box, h("h2", { id: "history-title" }, "History"),
    h("ol", { class: "history", reversed: true }, (data.items || []).map((v) => h("li", {},
      v.job_id ? h("a", { href: `#/jobs/${encodeURIComponent(v.job_id)}` }, v.action) : h("span", {}, v.action),
      ` ${formatTime(v.at)}`, v.version ? ` · v${v.version}` : null,
      v.reason ? h("span", { class: "muted" }, ` — ${v.reason}`) : null))),
    data.diff_available
      ? h("button", { type: "button", class: "secondary", onclick: () => showDiff(base, diffBox) }, "Show the last change")
      : h("p", { class: "muted" }, "No earlier version kept to compare with."),
    diffBox);
}

async function showDiff(base, box) {
  try {
    const diff = await get(`${base}/diff`);
    clear(box,
      h("p", { class: "muted" }, `v${diff.from_version} → v${diff.to_version}${diff.by ? ` (${diff.by})` : ""}`),
      h("div", { class: "diff", role: "region", "aria-label": "Changes", tabindex: "0" },
        diff.lines.map((line) => h("span", { class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "" }, `${line}\n`))));
  } catch (exc) {
    clear(box, h("p", { class: "error" }, exc.message));
  }
}

export async function renderEditor(main, { kb, slug }) {
  const base = `${kbApi(kb)}/pages/${encodeURIComponent(slug)}`;
  const page = await get(base);
  const title = h("input", { id: "edit-title", name: "title", value: page.title, required: true, size: 50 });
  const text = h("textarea", { id: "edit-markdown", name: "markdown", class: "markdown", spellcheck: "true" });
  text.value = page.markdown;
  const error = h("p", { class: "error", role: "alert" });
  const save = h("button", { type: "submit" }, "Save");
  const form = h("form", { onsubmit: submit, onkeydown: (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "s") {
      ev.preventDefault();
      form.requestSubmit();
    }
  } },
  h("p", {}, h("label", { for: "edit-title" }, "Title"), " ", title),
  h("p", {}, h("label", { for: "edit-markdown" }, "Markdown"), h("br"), text),
  h("p", { class: "muted" }, "Link pages with [[slug]]. Keep citations such as [^1] to keep their sources. "
    + "A page you edit is kept as you wrote it: compiles mark it when new evidence arrives instead of rewriting it."),
  h("div", { class: "toolbar" }, save, h("a", { href: kbPath(kb, `page/${encodeURIComponent(slug)}`) }, "Cancel")),
  error);
  clear(main, h("h1", {}, `Edit · ${page.title || slug}`), form);
  text.focus();

  async function submit(ev) {
    ev.preventDefault();
    error.textContent = "";
    save.disabled = true;
    try {
      await put(base, { markdown: text.value, title: title.value.trim() || undefined });
      announce("Saved: the page is marked as edited");
      go(kbPath(kb, `page/${encodeURIComponent(slug)}`));
    } catch (exc) {
      error.textContent = exc instanceof ApiError && exc.field ? `${exc.field}: ${exc.message}` : exc.message;
      save.disabled = false;
    }
  }
}
