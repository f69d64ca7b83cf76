// Knowledge bases: what each holds and how it last compiled; create one, delete one.

import { all, del, get, post } from "./api.js";
import { announce, clear, formatAgo, h } from "./dom.js";
import { go, kbPath } from "./router.js";
import { knownKnowledgeBases, refreshKnowledgeBases } from "./state.js";
import { kbApi } from "./wiki.js";

const NAME_RULE = "1–63 lowercase letters, digits or “-”, starting with a letter or digit";

/** The template names a tenant can pick; `fallback` when they cannot be listed. */
export async function templateNames(fallback = ["wiki"]) {
  try {
    return (await all("/templates", { limit: 200 })).map((t) => t.name);
  } catch {
    return fallback;
  }
}

export async function renderKnowledgeBases(main) {
  const [templates] = await Promise.all([templateNames(), refreshKnowledgeBases()]);
  const kbs = knownKnowledgeBases();
  const list = h("div", { class: "cards" });
  clear(main,
    h("h1", {}, "Knowledge bases"),
    h("p", { class: "muted" },
      "A knowledge base is a set of documents compiled into a wiki. Upload documents to one, then compile it."),
    createForm(templates),
    h("section", { "aria-labelledby": "kbs-title" },
      h("h2", { id: "kbs-title" }, kbs.length ? `${kbs.length} knowledge base${kbs.length > 1 ? "s" : ""}` : "None yet"),
      list));
  for (const kb of kbs) list.append(kbCard(kb));
}

function createForm(templates) {
  const name = h("input", {
    id: "new-kb-name", name: "name", required: true, pattern: "[a-z0-9][a-z0-9\\-]{0,62}", size: 24,
    autocomplete: "off", spellcheck: "false", "aria-describedby": "new-kb-rule new-kb-error",
  });
  const description = h("input", { id: "new-kb-description", name: "description", size: 36 });
  const template = h("select", { id: "new-kb-template", name: "default_template" },
    templates.map((t) => h("option", { value: t, selected: t === "wiki" }, t)));
  const error = h("p", { class: "error", role: "alert", id: "new-kb-error" });
  const button = h("button", { type: "submit" }, "Create");
  return h("form", {
    class: "card create-kb", "aria-labelledby": "new-kb-title",
    onsubmit: async (ev) => {
      ev.preventDefault();
      error.textContent = "";
      button.disabled = true;
      try {
        const kb = await post("/knowledge-bases", {
          name: name.value.trim(), description: description.value.trim(), default_template: template.value,
        });
        await refreshKnowledgeBases();
        announce(`Knowledge base ${kb.name} created`);
        go(kbPath(kb.name, "documents"));
      } catch (exc) {
        error.textContent = exc.field === "name" && exc.status === 422
          ? `The name must be ${NAME_RULE}.` : exc.message;
        name.focus();
      } finally {
        button.disabled = false;
      }
    },
  },
  h("h2", { id: "new-kb-title" }, "New knowledge base"),
  h("div", { class: "form-row" },
    h("label", { for: "new-kb-name" }, "Name"), name,
    h("label", { for: "new-kb-description" }, "Description"), description,
    h("label", { for: "new-kb-template" }, "Template"), template,
    button),
  h("p", { class: "muted hint", id: "new-kb-rule" }, `Name: ${NAME_RULE}. It appears in addresses.`),
  error);
}

function kbCard(kb) {
  const summary = h("p", { class: "muted" }, "…");
  const last = h("p", {}, "Last compile: …");
  const actions = h("div", { class: "toolbar" },
    h("a", { class: "button", href: kbPath(kb.name, "documents") }, "Documents"),
    h("a", { href: kbPath(kb.name, "wiki") }, "Wiki"),
    h("a", { href: kbPath(kb.name, "canvas") }, "Canvas"));
  const card = h("article", { class: "card kb-summary", "data-kb": kb.name, "aria-labelledby": `kbs-${kb.name}` },
    h("h3", { id: `kbs-${kb.name}` }, h("a", { href: kbPath(kb.name, "documents") }, kb.name)),
    kb.workspace ? h("p", { class: "muted" }, "The workspace ", h("code", {}, kb.workspace),
      ": the same documents and wiki as ", h("code", {}, "compendium compile"), " there.")
      : kb.description ? h("p", { class: "muted" }, kb.description) : null,
    summary, last, actions, deleteControl(kb));
  get(`${kbApi(kb.name)}/status`).then((status) => {
    const c = status.counts;
    summary.textContent = `${c.documents} document${c.documents === 1 ? "" : "s"} · ${c.pages} pages · `
      + `${c.entities} entities · template ${kb.default_template}`;
    clear(last, "Last compile: ", lastCompile(status.last_compile));
  }, (exc) => { summary.textContent = exc.message; });
  return card;
}

export function lastCompile(last) {
  if (!last) return h("span", { class: "muted" }, "never");
  const p = last.pages || {};
  return [h("span", { class: `badge ${last.status}`, "data-status": last.status }, last.status.replace("_", " ")),
    ` ${formatAgo(last.finished_at)} · ${p.created ?? 0} created, ${p.updated ?? 0} updated, ${p.deleted ?? 0} deleted`];
}

/** Delete asks once more, in place (no browser dialog), and says what goes with it. */
function deleteControl(kb) {
  const box = h("div", { class: "delete-kb" });
  const what = kb.workspace
    ? "Remove it from this server? The workspace keeps its documents and wiki."
    : "Delete it with its documents, wiki, schedules and jobs? This cannot be undone.";
  const ask = () => clear(box,
    h("p", { role: "alert" }, what),
    h("button", { type: "button", class: "danger", onclick: remove }, kb.workspace ? "Remove" : "Delete for good"),
    " ",
    h("button", { type: "button", class: "secondary", onclick: idle }, "Keep it"));
  const idle = () => clear(box,
    h("button", { type: "button", class: "link-button danger-link", "aria-label": `Delete ${kb.name}`, onclick: ask },
      kb.workspace ? "Remove from server" : "Delete"));
  async function remove() {
    try {
      await del(kbApi(kb.name));
      announce(`${kb.name} deleted`);
      await refreshKnowledgeBases();
      go("#/kbs");
    } catch (exc) {
      clear(box, h("p", { class: "error", role: "alert" }, exc.message));
    }
  }
  idle();
  return box;
}
