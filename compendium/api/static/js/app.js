// The single-page shell: sign-in gate, knowledge base picker and the hash router.

import { ApiError, all } from "./api.js";
import { announce, clear, h } from "./dom.js";
import { closePanel, installPanel } from "./panel.js";
import { go, installRouter, kbPath } from "./router.js";
import { session } from "./session.js";
import { renderSignIn } from "./signin.js";
import { installKnowledgeBaseLoader, knownKnowledgeBases, setKnowledgeBases } from "./state.js";

// Routes: pattern -> [section, module, export]. Modules load on first use.
const ROUTES = [
  [/^\/signin$/, "signin", null],
  [/^\/kbs$/, "kbs", () => import("./kbs.js").then((m) => m.renderKnowledgeBases)],
  [/^\/kb\/(?<kb>[^/]+)\/documents$/, "documents", () => import("./documents.js").then((m) => m.renderDocuments)],
  [/^\/jobs$/, "jobs", () => import("./jobs.js").then((m) => m.renderJobs)],
  [/^\/jobs\/(?<job>[^/]+)$/, "jobs", () => import("./jobs.js").then((m) => m.renderJob)],
  [/^\/kb\/(?<kb>[^/]+)\/wiki$/, "wiki", () => import("./wiki.js").then((m) => m.renderPageList)],
  [/^\/kb\/(?<kb>[^/]+)\/page\/(?<slug>[^/]+)$/, "wiki", () => import("./page.js").then((m) => m.renderPage)],
  [/^\/kb\/(?<kb>[^/]+)\/page\/(?<slug>[^/]+)\/edit$/, "wiki", () => import("./page.js").then((m) => m.renderEditor)],
  [/^\/kb\/(?<kb>[^/]+)\/canvas$/, "canvas", () => import("./canvas/view.js").then((m) => m.renderCanvas)],
  [/^\/kb\/(?<kb>[^/]+)\/ask$/, "ask", () => import("./ask.js").then((m) => m.renderAsk)],
];

let cleanup = null;

function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, search = ""] = raw.split("?");
  return { path, params: new URLSearchParams(search) };
}

let navigation = 0; // bumps on every route change: a slower, older view never overwrites a newer one

async function route() {
  const mine = ++navigation;
  const main = document.getElementById("main");
  const { path, params } = parseHash();
  if (cleanup) {
    try { cleanup(); } catch { /* a view's cleanup must not block the next view */ }
    cleanup = null;
  }
  closePanel();
  if (!session.key || path === "/signin") {
    showNav(false);
    renderSignIn(main, onSignedIn);
    return;
  }
  if (!knownKnowledgeBases().length) await loadKnowledgeBases();
  if (mine !== navigation) return;
  if (path === "/" || path === "") {
    go(session.kb ? kbPath(session.kb, "wiki") : "#/kbs"); // no knowledge base yet: make one
    return;
  }
  for (const [pattern, section, load] of ROUTES) {
    const match = pattern.exec(path);
    if (!match || !load) continue;
    const args = Object.fromEntries(
      Object.entries(match.groups || {}).map(([k, v]) => [k, decodeURIComponent(v)]),
    );
    if (args.kb) chooseKb(args.kb, false);
    markSection(section);
    main.className = section === "canvas" ? "wide" : "";
    // A view renders into its own container, shown only if no newer route started meanwhile.
    const view = h("div", { class: "view" }, h("p", { class: "loading" }, "Loading…"));
    clear(main, view);
    try {
      const render = await load();
      if (mine !== navigation) return;
      const done = (await render(view, args, params)) || null;
      if (mine !== navigation) {
        done?.();
        return;
      }
      cleanup = done;
    } catch (exc) {
      if (mine === navigation) showError(view, exc);
    }
    return;
  }
  clear(main, h("h1", {}, "Not found"), h("p", {}, "This address shows nothing. ", h("a", { href: "#/" }, "Start again")));
}

export function showError(main, exc) {
  if (exc instanceof ApiError && exc.status === 401) return; // the sign-in view takes over
  console.error(exc);
  const message = exc instanceof ApiError ? exc.message : `Something went wrong: ${exc.message}`;
  clear(main, h("h1", {}, exc.status === 404 ? "Not found" : "Error"), h("p", { class: "error", role: "alert" }, message));
}

async function loadKnowledgeBases() {
  let knowledgeBases = [];
  try {
    knowledgeBases = await all("/knowledge-bases", { limit: 200 });
  } catch (exc) {
    if (!(exc instanceof ApiError && exc.status === 401)) announce(`Knowledge bases: ${exc.message}`);
  }
  setKnowledgeBases(knowledgeBases);
  const select = document.getElementById("kb-select");
  clear(select, knowledgeBases.length ? null : h("option", { value: "" }, "(none yet)"),
    knowledgeBases.map((kb) => h("option", { value: kb.name }, kb.name)));
  if (!knowledgeBases.some((kb) => kb.name === session.kb)) session.kb = knowledgeBases[0]?.name || "";
  chooseKb(session.kb, false);
  showNav(true);
}

function chooseKb(kb, navigate) {
  session.kb = kb;
  const select = document.getElementById("kb-select");
  select.value = kb;
  for (const link of document.querySelectorAll("header nav a[data-section]")) {
    const section = link.dataset.section;
    if (section === "jobs" || section === "kbs") link.href = `#/${section}`;
    else link.href = kb ? kbPath(kb, section) : "#/kbs";
  }
  if (navigate) {
    const { section } = document.querySelector("header nav a[aria-current]")?.dataset || {};
    go(section && section !== "jobs" && section !== "kbs" ? kbPath(kb, section) : location.hash || "#/");
  }
}

function markSection(section) {
  for (const link of document.querySelectorAll("header nav a[data-section]")) {
    if (link.dataset.section === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function showNav(visible) {
  document.querySelector("header nav").hidden = !visible;
  document.querySelector(".kb-picker").hidden = !visible;
  document.getElementById("sign-out").hidden = !visible;
}

function onSignedIn() {
  setKnowledgeBases([]);
  go("#/");
}

function signOut() {
  session.signOut();
  setKnowledgeBases([]);
  go("#/signin");
}

installRouter(route);
installKnowledgeBaseLoader(loadKnowledgeBases);
installPanel();
document.getElementById("kb-select").addEventListener("change", (ev) => chooseKb(ev.target.value, true));
document.getElementById("sign-out").addEventListener("click", signOut);
window.addEventListener("hashchange", route);
window.addEventListener("compendium:unauthorized", () => {
  // A key that stopped working (revoked, wrong): forget it and ask again.
  if (document.querySelector(".signin")) return; // the sign-in form reports it itself
  session.key = "";
  setKnowledgeBases([]);
  announce("Your API key was not accepted. Sign in again.");
  go("#/signin");
});
route();
