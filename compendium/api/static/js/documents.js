// One knowledge base's documents: upload (drop or pick, with progress), list with their ingest
// status, remove; its template; compile it now; its schedules.

import { all, del, get, patch, post, uploadFiles } from "./api.js";
import { announce, clear, h } from "./dom.js";
import { lastCompile, templateNames } from "./kbs.js";
import { kbApi } from "./wiki.js";
import { go, kbPath } from "./router.js";
import { renderSchedules } from "./schedules.js";

const STATUS = {
  new: ["new", "not compiled yet"],
  changed: ["changed", "edited since the last compile read it"],
  compiled: ["compiled", "as the last compile read it"],
  failed: ["failed", "the last compile could not read it"],
};

export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function counted(n, one, many = `${one}s`) {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** Two sizes that read differently even when they round alike (64.0 kB vs 64.0 kB). */
function sizes(a, b) {
  const [x, y] = [formatBytes(a), formatBytes(b)];
  return x === y ? [`${a.toLocaleString()} bytes`, `${b.toLocaleString()} bytes`] : [x, y];
}

export async function renderDocuments(main, { kb: name }) {
  const base = kbApi(name);
  const [kb, limits, templates] = await Promise.all([get(base), get(`${base}/upload-limits`), templateNames()]);
  const summary = h("p", { class: "kb-status" }, "…");
  const table = h("tbody");
  const count = h("span", { class: "muted" });
  const schedules = h("section", { "aria-labelledby": "schedules-title", class: "schedules-editor" });

  clear(main,
    h("p", {}, h("a", { href: "#/kbs" }, "← Knowledge bases")),
    h("h1", {}, `${kb.name}: documents`),
    kb.workspace ? h("p", { class: "muted" }, "The workspace ", h("code", {}, kb.workspace),
      ". Documents are its documents/ folder: what you add here, ", h("code", {}, "compendium compile"),
      " there compiles too.") : kb.description ? h("p", { class: "muted" }, kb.description) : null,
    summary,
    compileBar(kb, templates),
    uploader(base, limits, reload),
    h("section", { "aria-labelledby": "documents-title" },
      h("h2", { id: "documents-title" }, "Documents ", count),
      h("table", { class: "documents-table" },
        h("thead", {}, h("tr", {}, [["Document"], ["Size", "number"], ["Status"], ["Chunks", "number"], [""]].map(
          ([t, cls]) => h("th", { scope: "col", class: cls }, t)))),
        table)),
    schedules);

  async function reload() {
    const [docs, status] = await Promise.all([all(`${base}/documents`, { limit: 500 }), get(`${base}/status`)]);
    count.textContent = `(${docs.length})`;
    clear(table, docs.length ? docs.map((d) => documentRow(base, d, reload))
      : h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No documents yet: drop some above.")));
    const c = status.counts;
    const waiting = docs.filter((d) => d.status === "new" || d.status === "changed").length;
    const failed = docs.filter((d) => d.status === "failed").length;
    const notes = [waiting && `${waiting} not compiled yet`, failed && `${failed} could not be read`].filter(Boolean);
    clear(summary, counted(docs.length, "document") + (notes.length ? ` (${notes.join(", ")})` : "")
      + ` · ${counted(c.chunks, "chunk")} · ${counted(c.pages, "page")} · ${counted(c.entities, "entity", "entities")}`
      + ` · ${counted(c.topics, "topic")} · Last compile: `,
    lastCompile(status.last_compile),
      c.pages ? [" · ", h("a", { href: kbPath(kb.name, "wiki") }, "Read the wiki")] : null);
  }

  await reload();
  renderSchedules(schedules, kb, templates);
  return null;
}

function compileBar(kb, templates) {
  // A workspace's template is its compendium.yaml's default_template, as for `compendium compile`.
  const choices = templates.includes(kb.default_template) ? templates : [kb.default_template, ...templates];
  const select = h("select", { id: "kb-template", name: "default_template", disabled: Boolean(kb.workspace),
    "aria-describedby": "kb-template-note" },
  choices.map((t) => h("option", { value: t, selected: t === kb.default_template }, t)));
  const saved = h("span", { class: "muted", "aria-live": "polite", id: "kb-template-note" },
    kb.workspace ? "Set by default_template in the workspace's compendium.yaml." : "");
  select.addEventListener("change", async () => {
    saved.textContent = "";
    try {
      await patch(kbApi(kb.name), { default_template: select.value });
      kb.default_template = select.value;
      saved.textContent = `Compiles use ${select.value} from now on.`;
    } catch (exc) {
      saved.textContent = exc.message;
      select.value = kb.default_template;
    }
  });
  const button = h("button", {
    type: "button",
    onclick: async () => {
      button.disabled = true;
      try {
        const job = await post(`${kbApi(kb.name)}/compile`, {});
        announce(`Compile of ${kb.name} started`);
        go(`#/jobs/${encodeURIComponent(job.id)}`);
      } catch (exc) {
        saved.textContent = `Cannot start: ${exc.message}`;
        button.disabled = false;
      }
    },
  }, "Compile now");
  return h("div", { class: "toolbar compile-bar" },
    h("label", { for: "kb-template" }, "Template of this knowledge base"), select, button, saved);
}

function documentRow(base, doc, reload) {
  const [label, why] = STATUS[doc.status] || [doc.status, ""];
  const remove = h("button", {
    type: "button", class: "link-button", "aria-label": `Remove ${doc.path}`,
    onclick: async () => {
      remove.disabled = true;
      try {
        await del(`${base}/documents/${doc.path.split("/").map(encodeURIComponent).join("/")}`);
        announce(`Removed ${doc.path}: the next compile drops what came only from it`);
        await reload();
      } catch (exc) {
        announce(`Cannot remove ${doc.path}: ${exc.message}`);
        remove.disabled = false;
      }
    },
  }, "Remove");
  return h("tr", { "data-path": doc.path },
    h("td", {}, doc.title && doc.title !== doc.path ? [h("span", {}, doc.title), h("br"), h("code", { class: "muted" }, doc.path)]
      : h("code", {}, doc.path)),
    h("td", { class: "number" }, formatBytes(doc.size)),
    h("td", {}, h("span", { class: `badge doc-${doc.status}`, title: why, "data-status": doc.status }, label),
      doc.error ? h("div", { class: "error doc-error" }, doc.error) : null),
    h("td", { class: "number" }, doc.compiled ? String(doc.chunks) : "—"),
    h("td", {}, remove));
}

/** A drop zone and a file picker; each file goes up on its own with a progress bar. */
function uploader(base, limits, reload) {
  const input = h("input", { type: "file", multiple: true, id: "upload-input", class: "visually-hidden",
    accept: limits.extensions.join(",") });
  const folderInput = h("input", { type: "file", multiple: true, webkitdirectory: true, id: "upload-folder",
    class: "visually-hidden" });
  const queue = h("ul", { class: "uploads", "aria-label": "Uploads" });
  const zone = h("div", { class: "drop-zone" },
    h("strong", {}, "Drop documents or folders here"), ", or choose ",
    h("label", { class: "link-like", for: "upload-input" }, "files"), " or ",
    h("label", { class: "link-like", for: "upload-folder" }, "a folder"),
    h("span", { class: "muted hint" },
      `${limits.extensions.join(" ")} · up to ${formatBytes(limits.max_file_bytes)} each`));
  input.addEventListener("change", () => {
    send([...input.files].map((file) => ({ file, name: file.name })));
    input.value = "";
  });
  folderInput.addEventListener("change", () => {
    // A folder keeps its structure under a folder of its own name, as `compendium add` does.
    inFolder([...folderInput.files].map((file) => ({ file, name: file.webkitRelativePath || file.name })));
    folderInput.value = "";
  });
  for (const name of ["dragenter", "dragover"]) {
    zone.addEventListener(name, (ev) => {
      ev.preventDefault();
      zone.classList.add("over");
    });
  }
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", async (ev) => {
    ev.preventDefault();
    zone.classList.remove("over");
    const entries = [...(ev.dataTransfer?.items || [])].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
    if (entries.some((entry) => entry.isDirectory)) {
      inFolder((await Promise.all(entries.map(walk))).flat());
    } else {
      send([...(ev.dataTransfer?.files || [])].map((file) => ({ file, name: file.name })));
    }
  });

  // From a folder, only what ingest reads goes up (hidden files and other types stay behind).
  function inFolder(items) {
    const hidden = (name) => name.split("/").some((part) => part.startsWith("."));
    const kept = items.filter(({ name }) => !hidden(name) && limits.extensions.includes(extension(name)));
    const left = items.length - kept.length;
    const note = left ? `${left} file${left > 1 ? "s" : ""} of the folder left out: hidden, or not a type Compendium reads` : "";
    if (note) announce(note);
    send(kept, note);
  }

  // `note`: what to say besides, repeated with the outcome so that one does not replace the other.
  async function send(files, note = "") {
    if (!files.length) return;
    let sent = 0;
    for (const { file, name } of files.slice(0, limits.max_files)) {
      const row = uploadRow(file, name);
      queue.prepend(row.el);
      const problem = refuse(file, limits);
      if (problem) {
        row.fail(problem);
        continue;
      }
      try {
        await uploadFiles(`${base}/documents`, [{ file, name }], { onProgress: row.progress });
        row.done();
        sent += 1;
      } catch (exc) {
        row.fail(exc.message);
      }
    }
    const said = [];
    if (sent) said.push(sent > 1 ? `${sent} documents uploaded: compile to add them to the wiki`
      : "1 document uploaded: compile to add it to the wiki");
    if (files.length > limits.max_files) said.push(`Only ${limits.max_files} files at a time: the rest were left out`);
    if (note) said.push(note);
    if (said.length) announce(said.join(" · "));
    if (sent) await reload();
  }
  return h("section", { "aria-labelledby": "upload-title", class: "upload" },
    h("h2", { id: "upload-title" }, "Add documents"), input, folderInput, zone, queue);
}

/** Every file under a dropped entry, named by its path from the dropped folder. */
async function walk(entry) {
  if (entry.isFile) {
    const file = await new Promise((ok, fail) => entry.file(ok, fail));
    return [{ file, name: entry.fullPath.replace(/^\//, "") }];
  }
  const reader = entry.createReader();
  const found = [];
  for (;;) { // readEntries hands out a directory in batches until it returns none
    const batch = await new Promise((ok, fail) => reader.readEntries(ok, fail));
    if (!batch.length) break;
    found.push(...batch);
  }
  return (await Promise.all(found.map(walk))).flat();
}

function extension(name) {
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot).toLowerCase() : "";
}

function refuse(file, limits) {
  const ext = extension(file.name);
  if (!limits.extensions.includes(ext)) {
    return `${ext ? `“${ext}” files` : "Files without an extension"} cannot be compiled; use ${limits.extensions.join(", ")}.`;
  }
  if (file.size > limits.max_file_bytes) {
    const [size, limit] = sizes(file.size, limits.max_file_bytes);
    return `Too large: ${size}; the server takes up to ${limit} per file.`;
  }
  if (file.size === 0) return "It is empty.";
  return "";
}

function uploadRow(file, name) {
  const bar = h("progress", { max: 1, value: 0, "aria-label": `Upload of ${name}` });
  const note = h("span", { class: "muted" }, formatBytes(file.size));
  const el = h("li", { "data-file": name }, h("code", {}, name), bar, note);
  return {
    el,
    progress(sent, total) {
      bar.max = total || file.size || 1;
      bar.value = sent;
    },
    done() {
      bar.max = 1;
      bar.value = 1;
      el.classList.add("uploaded");
      note.textContent = `${formatBytes(file.size)} · uploaded`;
    },
    fail(message) {
      bar.remove();
      el.classList.add("failed");
      clear(note, h("span", { class: "error", role: "alert" }, message));
    },
  };
}
