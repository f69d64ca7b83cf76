// One wiki page: rendered body, citations to their passages, aliases, related pages, history, edit.

import { ApiError, get, getText, post, put } from "./api.js";
import { showPassage } from "./citations.js";
import { announce, clear, formatTime, h, sanitisedFragment } from "./dom.js";
import { outlineNav } from "./outline.js";
import { go, kbPath } from "./router.js";
import { kbApi } from "./wiki.js";

export async function renderPage(main, { kb, slug }) {
  const base = `${kbApi(kb)}/pages/${encodeURIComponent(slug)}`;
  const [page, html] = await Promise.all([get(base), getText(`${base}/html`)]);
  const body = h("div", { class: "page-body", id: "page-body" }, sanitisedFragment(html));
  dropRepeatedTitle(body, page.title || page.slug);
  wireLinks(kb, page, body);
  const related = h("section", { "aria-labelledby": "related-title" }, h("h2", { id: "related-title" }, "Related pages"), h("p", { class: "muted" }, "…"));
  const history = h("section", { "aria-labelledby": "history-title" }, h("h2", { id: "history-title" }, "History"), h("p", { class: "muted" }, "…"));
  const changes = h("section", { id: "page-diff", class: "changes", "aria-live": "polite", hidden: true });
  const canvasLink = page.subject_id && page.kind !== "topic"
    ? h("a", { href: kbPath(kb, `canvas?focus=${encodeURIComponent(page.subject_id)}&depth=2`) }, "Show on the canvas") : null;

  clear(main, h("div", { class: "wiki-layout" }, outlineNav(kb, slug), h("div", {},
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
        body, changes),
      h("aside", { class: "page-meta", "aria-label": "About this page" },
        h("section", { "aria-labelledby": "aliases-title" },
          h("h2", { id: "aliases-title" }, "Also known as"),
          page.aliases?.length ? h("ul", { class: "aliases" }, page.aliases.map((a) => h("li", {}, a))) : h("p", { class: "muted" }, "No aliases.")),
        related, history)))),
  );
  loadRelated(kb, base, related);
  loadHistory(kb, slug, base, history, changes);
  // Keyboard: e edits the page, Backspace goes back to the list (not while typing).
  const onKey = (ev) => {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey || typing(ev.target)) return;
    if (ev.key === "e") {
      ev.preventDefault();
      go(kbPath(kb, `page/${encodeURIComponent(slug)}/edit`));
    } else if (ev.key === "Backspace") {
      ev.preventDefault();
      go(kbPath(kb, "wiki"));
    }
  };
  document.addEventListener("keydown", onKey);
  return () => document.removeEventListener("keydown", onKey);
}

export function typing(target) {
  return Boolean(target?.closest?.("input, textarea, select, [contenteditable='true']"));
}

/** The page's Markdown starts with `# Title`; the view shows the title already. */
function dropRepeatedTitle(body, title) {
  const first = body.firstElementChild;
  if (first?.tagName === "H1" && first.textContent.trim() === title.trim()) first.remove();
}

/** "Vacuum › Vacuum › Cost-based delay — chunk 985d…" -> "Vacuum › Cost-based delay". */
export function sourceLabel(text) {
  const parts = text.replace(/\s*—\s*chunk\s+\S+\s*$/, "").split(" › ").map((p) => p.trim()).filter(Boolean);
  const out = parts.filter((p, i) => i === 0 || p.toLowerCase() !== parts[i - 1].toLowerCase());
  return out.join(" › ") || "Source";
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
      const label = sourceLabel(text);
      li.replaceChildren(h("a", {
        href: "#", class: "citation", "data-chunk": chunk,
        onclick: (ev) => { ev.preventDefault(); showPassage(kb, chunk, "", label); },
      }, label));
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

async function loadHistory(kb, slug, base, box, diffBox) {
  let data, versions;
  try {
    [data, versions] = await Promise.all([get(`${base}/history`), get(`${base}/versions`)]);
  } catch (exc) {
    clear(box, h("h2", { id: "history-title" }, "History"), h("p", { class: "muted" }, exc.message));
    return;
  }
  const kept = versions.items || [];
  const pick = (id, label, chosen) => h("label", { for: id }, label,
    h("select", { id }, kept.map((v) => h("option", { value: v.version, selected: v.version === chosen },
      `v${v.version}${v.current ? " (current)" : ""}${v.same_as ? ` · back to v${v.same_as}` : v.edited ? " · edited" : ""} · ${formatTime(v.at)}`))));
  const compare = kept.length > 1 ? h("form", {
    class: "compare", "aria-label": "Compare versions",
    onsubmit: (ev) => { ev.preventDefault(); showCompare(base, Number(from.querySelector("select").value), Number(to.querySelector("select").value), diffBox); },
  }) : null;
  const from = pick("compare-from", "From", kept[1]?.version);
  const to = pick("compare-to", "To", kept[0]?.version);
  const revert = h("button", { type: "button", class: "secondary", id: "revert" }, "Revert to From");
  if (compare) {
    compare.append(from, to, h("button", { type: "submit", class: "secondary" }, "Compare"), revert);
    const name = () => { revert.textContent = `Revert to v${from.querySelector("select").value}`; };
    from.addEventListener("change", name);
    name();
    revert.addEventListener("click", async () => {
      const version = Number(from.querySelector("select").value);
      revert.disabled = true;
      try {
        await post(`${base}/revert`, { version });
        announce(`Reverted to version ${version}: saved as a new version`);
        go(`${kbPath(kb, `page/${encodeURIComponent(slug)}`)}?reverted=${version}`);
      } catch (exc) {
        diffBox.hidden = false;
        clear(diffBox, h("p", { class: "error", role: "alert" }, fieldMessage(exc)));
        revert.disabled = false;
      }
    });
  }
  clear(box, h("h2", { id: "history-title" }, "History"),
    h("ol", { class: "history", reversed: true }, (data.items || []).map((v) => h("li", {},
      v.job_id ? h("a", { href: `#/jobs/${encodeURIComponent(v.job_id)}` }, v.action) : h("span", {}, v.action),
      ` ${formatTime(v.at)}`, v.version ? ` · v${v.version}` : null,
      v.reason ? h("span", { class: "muted" }, ` — ${v.reason}`) : null))),
    compare || h("p", { class: "muted" }, "No earlier version kept to compare with."));
}

async function showCompare(base, from, to, box) {
  box.hidden = false;
  try {
    const diff = await get(`${base}/compare?from=${from}&to=${to}`);
    const title = h("h2", {}, `Changes from v${diff.from_version} to v${diff.to_version}`);
    if (diff.same) {
      clear(box, title, h("p", { class: "muted" }, "The two versions are the same."));
      return;
    }
    // The ---/+++ file header says nothing the heading does not; hunks show as quiet rules.
    const lines = diff.lines.filter((line) => !/^(---|\+\+\+) /.test(line));
    clear(box, title,
      diff.from_title !== diff.to_title ? h("p", {}, `Title: “${diff.from_title}” → “${diff.to_title}”`) : null,
      h("div", { class: "diff", role: "region", "aria-label": "Changes", tabindex: "0" },
        lines.map((line) => h("span", { class: line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "" }, `${line}\n`))));
    box.scrollIntoView({ block: "start" });
  } catch (exc) {
    clear(box, h("p", { class: "error" }, exc.message));
  }
}

const FIELD_PHRASES = [
  [/^String should have at least 1 character/i, () => "cannot be empty"],
  [/^String should have at most (\d+) characters?/i, (m) => `is too long: at most ${m[1]} characters`],
  [/^Field required/i, () => "is required"],
  [/^Input should be a valid (\w+)/i, (m) => `must be a valid ${m[1]}`],
];

/** An API error as a sentence: "Markdown cannot be empty." rather than "markdown: markdown: String…". */
export function fieldMessage(exc) {
  if (!(exc instanceof ApiError) || !exc.field) return exc.message;
  const field = exc.field.split(".").pop();
  let message = exc.message;
  while (message.toLowerCase().startsWith(`${exc.field.toLowerCase()}: `)) message = message.slice(exc.field.length + 2);
  const label = field.charAt(0).toUpperCase() + field.slice(1).replace(/_/g, " ");
  for (const [pattern, phrase] of FIELD_PHRASES) {
    const match = pattern.exec(message);
    if (match) return `${label} ${phrase(match)}.`;
  }
  const text = message.charAt(0).toLowerCase() + message.slice(1);
  return `${label}: ${text}${/[.!?]$/.test(text) ? "" : "."}`;
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
      const saved = await put(base, { markdown: text.value, title: title.value.trim() || undefined });
      announce(saved.version === page.version ? "No changes to save" : "Saved: the page is marked as edited");
      go(kbPath(kb, `page/${encodeURIComponent(slug)}`));
    } catch (exc) {
      error.textContent = fieldMessage(exc);
      save.disabled = false;
    }
  }
}
