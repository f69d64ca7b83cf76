// Job dashboard: knowledge bases with their last compile, live progress, start/cancel, schedules.

import { all, del, get, post, stream } from "./api.js";
import { announce, clear, formatAgo, formatTime, h } from "./dom.js";
import { kbPath } from "./router.js";
import { knownKnowledgeBases, refreshKnowledgeBases } from "./state.js";
import { lastCompile, templateNames } from "./kbs.js";

const PHASES = ["ingest", "map", "reduce", "plan", "refine"];
const ACTIVE = new Set(["queued", "running"]);
// How a job ends, in the words the report, `compendium status` and the exit codes use.
const STATUS_LABELS = {
  queued: "queued", running: "running", succeeded: "succeeded", failed: "failed", cancelled: "cancelled",
  partial: "partial: some items failed", budget_exceeded: "budget exceeded",
};

/** A status badge (data-status keeps the raw value); setStatus(badge, s) changes it. */
function statusBadge(status, attrs = {}) {
  return setStatus(h("span", attrs), status);
}

function setStatus(badge, status) {
  badge.textContent = STATUS_LABELS[status] || status;
  badge.className = `badge ${status}`;
  badge.dataset.status = status;
  return badge;
}

export async function renderJobs(main) {
  const stops = new Map(); // job id -> stop its event stream
  const [jobs, templates] = await Promise.all([recentJobs(), templateNames([])]);
  await refreshKnowledgeBases();
  const kbs = knownKnowledgeBases();
  const running = h("div", { class: "cards", id: "running-jobs" });
  const recent = h("tbody");

  clear(main,
    h("h1", {}, "Compiles"),
    h("section", { "aria-labelledby": "kb-title" },
      h("h2", { id: "kb-title" }, "Knowledge bases"),
      kbs.length ? h("div", { class: "cards" }, kbs.map((kb) => kbCard(kb, jobs, templates, startCompile)))
        : h("p", { class: "muted" }, "No knowledge base yet. ", h("a", { href: "#/kbs" }, "Create one"), ".")),
    h("section", { "aria-labelledby": "running-title" },
      h("h2", { id: "running-title" }, "Running"), running),
    h("section", { "aria-labelledby": "recent-title" },
      h("h2", { id: "recent-title" }, "Recent jobs"),
      h("table", { class: "jobs-table" },
        h("thead", {}, h("tr", {}, ["Job", "Knowledge base", "Template", "Status", "Started", "Took", "Pages"].map((t) => h("th", { scope: "col" }, t)))),
        recent)),
  );

  function showRunning() {
    // Jobs active now, and those followed since this view opened (finished ones keep their card).
    const shown = jobs.filter((j) => ACTIVE.has(j.status) || stops.has(j.id));
    clear(running, shown.length ? null : h("p", { class: "muted" }, "Nothing is compiling."));
    for (const job of shown) {
      const card = jobCard(job);
      running.append(card.el);
      if (!stops.has(job.id)) stops.set(job.id, follow(job, card, onFinished));
      else stops.get(job.id).card = card;
    }
  }

  function showRecent() {
    clear(recent, jobs.slice(0, 30).map(jobRow));
  }

  function onFinished(job) {
    // The card stays where it is with its final state; the table of recent jobs gains the row.
    const i = jobs.findIndex((j) => j.id === job.id);
    if (i >= 0) jobs[i] = job;
    stops.get(job.id)?.card.showJob(job);
    showRecent();
    // The knowledge base's card says so too, without a reload.
    const line = main.querySelector(`.kb-card[data-kb="${CSS.escape(job.knowledge_base)}"] .last-compile`);
    if (line) clear(line, "Last compile: ", lastJob(job));
    announce(`Compile of ${job.knowledge_base} ${job.status}`);
  }

  async function startCompile(kb, template) {
    const job = await post(`/knowledge-bases/${encodeURIComponent(kb)}/compile`, template ? { template } : {});
    if (!jobs.some((j) => j.id === job.id)) jobs.unshift(job);
    announce(`Compile of ${kb} queued`);
    showRunning();
    showRecent();
  }

  showRunning();
  showRecent();
  return () => {
    for (const follower of stops.values()) follower.stop();
  };
}

export async function renderJob(main, { job: jobId }) {
  let job = await get(`/jobs/${encodeURIComponent(jobId)}`);
  const live = h("div");
  const reportBox = h("div");
  clear(main,
    h("p", {}, h("a", { href: "#/jobs" }, "← All compiles")),
    h("h1", {}, `Compile of ${job.knowledge_base}`),
    h("p", { class: "muted" }, `Job ${job.id} · template ${job.template} · started by ${job.trigger}`),
    live, reportBox);
  const card = jobCard(job);
  live.append(card.el);
  showReport(reportBox, job);
  if (!ACTIVE.has(job.status)) return null;
  const follower = follow(job, card, (done) => {
    job = done;
    showReport(reportBox, job);
  });
  return () => follower.stop();
}

async function recentJobs() {
  // The API lists jobs oldest first (ids start with their creation time): newest first here.
  const jobs = await all("/jobs", { limit: 500 }, { max: 5000 });
  return jobs.sort((a, b) => b.created_at - a.created_at);
}

function kbCard(kb, jobs, templates, startCompile) {
  const last = jobs.find((j) => j.knowledge_base === kb.name && !ACTIVE.has(j.status));
  const select = h("select", { id: `template-${kb.name}`, name: "template" },
    (templates.length ? templates : [kb.default_template]).map((t) =>
      h("option", { value: t, selected: t === kb.default_template }, t)));
  const button = h("button", {
    type: "button", "data-kb": kb.name,
    onclick: async () => {
      button.disabled = true;
      try {
        await startCompile(kb.name, select.value);
      } catch (exc) {
        announce(`Cannot start: ${exc.message}`);
      } finally {
        button.disabled = false;
      }
    },
  }, "Start compile");
  const schedules = h("div", { class: "schedules" });
  loadSchedules(kb, schedules, templates);
  return h("article", { class: "card kb-card", "aria-labelledby": `kb-${kb.name}`, "data-kb": kb.name },
    h("h3", { id: `kb-${kb.name}` }, h("a", { href: kbPath(kb.name, "wiki") }, kb.name)),
    kb.description ? h("p", { class: "muted" }, kb.description) : null,
    h("p", { class: "last-compile" }, "Last compile: ", last ? lastJob(last) : compiledElsewhere(kb)),
    h("div", { class: "toolbar" },
      h("label", { for: `template-${kb.name}` }, "Template"), select, button,
      h("a", { href: kbPath(kb.name, "canvas") }, "Canvas")),
    schedules);
}

function lastJob(job) {
  return [statusBadge(job.status), " ",
    h("a", { href: `#/jobs/${encodeURIComponent(job.id)}` }, formatAgo(job.finished_at || job.created_at))];
}

// No job of the server compiled it: perhaps `compendium compile` did, in the served workspace.
function compiledElsewhere(kb) {
  const box = h("span", { class: "muted" }, "never");
  get(`/knowledge-bases/${encodeURIComponent(kb.name)}/status`)
    .then((status) => status.last_compile && clear(box, lastCompile(status.last_compile)), () => {});
  return box;
}

async function loadSchedules(kb, box, templates) {
  const base = `/knowledge-bases/${encodeURIComponent(kb.name)}/schedules`;
  let items = [];
  try {
    items = await all(base, { limit: 200 });
  } catch (exc) {
    clear(box, h("p", { class: "error" }, `Schedules: ${exc.message}`));
    return;
  }
  const cron = h("input", { id: `cron-${kb.name}`, name: "cron", placeholder: "0 3 * * *", size: 12, required: true });
  const template = h("select", { "aria-label": "Template of the schedule" },
    (templates.length ? templates : [kb.default_template]).map((t) => h("option", { value: t, selected: t === kb.default_template }, t)));
  const error = h("span", { class: "error", role: "alert" });
  clear(box,
    h("h4", {}, "Schedules"),
    items.length ? h("ul", {}, items.map((s) => h("li", {},
      h("code", {}, s.cron), ` ${s.template}`, s.enabled ? "" : " (paused)",
      h("span", { class: "muted" }, ` · next ${formatTime(s.next_run_at)} `),
      h("button", { type: "button", class: "link-button", "aria-label": `Delete schedule ${s.cron}`,
        onclick: async () => { await del(`${base}/${encodeURIComponent(s.id)}`); loadSchedules(kb, box, templates); } }, "delete"))))
      : h("p", { class: "muted" }, "None."),
    h("form", {
      class: "toolbar",
      onsubmit: async (ev) => {
        ev.preventDefault();
        error.textContent = "";
        try {
          await post(base, { cron: cron.value.trim(), template: template.value });
          loadSchedules(kb, box, templates);
        } catch (exc) {
          error.textContent = exc.message;
        }
      },
    }, h("label", { for: `cron-${kb.name}` }, "Cron (UTC)"), cron, template,
    h("button", { type: "submit", class: "secondary" }, "Add schedule"), error));
}

function jobRow(job) {
  const took = job.finished_at && job.started_at ? `${(job.finished_at - job.started_at).toFixed(1)} s` : "—";
  const pages = job.report?.pages;
  return h("tr", { "data-job": job.id },
    h("td", {}, h("a", { href: `#/jobs/${encodeURIComponent(job.id)}` }, job.id.slice(-8))),
    h("td", {}, job.knowledge_base),
    h("td", {}, job.template),
    h("td", {}, statusBadge(job.status)),
    h("td", {}, formatTime(job.started_at || job.created_at)),
    h("td", {}, took),
    h("td", {}, pages ? `+${pages.created} ~${pages.updated} −${pages.deleted}` : "—"));
}

/** A card with one progress bar per phase; update(job or event) redraws it. */
function jobCard(job) {
  const bars = new Map();
  const status = statusBadge(job.status, { "data-role": "status" });
  const usage = h("p", { class: "muted usage" });
  const message = h("p", { class: "muted", "aria-live": "polite" });
  const cancel = h("button", {
    type: "button", class: "danger",
    onclick: async () => {
      cancel.disabled = true;
      try {
        await post(`/jobs/${encodeURIComponent(job.id)}/cancel`);
        announce("Cancel requested: the compile stops after its current batch");
      } catch (exc) {
        announce(`Cannot cancel: ${exc.message}`);
        cancel.disabled = false;
      }
    },
  }, "Cancel");
  const phases = h("div", { class: "phases" }, PHASES.map((name) => {
    const bar = h("progress", { max: 1, value: 0, "aria-label": `${name} progress` });
    const count = h("span", { class: "count" }, "—");
    bars.set(name, { bar, count });
    return h("div", { class: "phase", "data-phase": name }, h("span", {}, name), bar, count);
  }));
  const el = h("article", { class: "card job-card", "data-job": job.id, "aria-label": `Compile of ${job.knowledge_base}` },
    h("h3", {}, h("a", { href: `#/jobs/${encodeURIComponent(job.id)}` }, `${job.knowledge_base} · ${job.template}`), " ", status),
    phases, usage, message, ACTIVE.has(job.status) ? cancel : null);

  function setPhase(name, entry) {
    const slot = bars.get(name);
    if (!slot || !entry) return;
    const total = entry.total || 0;
    const done = entry.done || 0;
    if (entry.status === "finished") {
      // What was settled of the total (the server's phase_end, as the CLI draws it); what was
      // withheld or refused is said, and what failed, never a ✓ over it.
      const reached = entry.reached ?? done + (entry.skipped || 0);
      const failed = entry.failed || 0;
      const said = [];
      if (entry.withheld) said.push(`${entry.withheld} withheld`);
      if (entry.rejected) said.push(`${entry.rejected} rewrite${entry.rejected === 1 ? "" : "s"} refused`);
      said.push(entry.stopped || (failed ? `${failed} failed` : "✓"));
      slot.bar.max = Math.max(total, 1);
      slot.bar.value = total ? Math.min(reached, total) : 1;
      slot.count.textContent = `${reached}/${total} · ${said.join(" · ")}`.replace(" · ✓", " ✓");
    } else if (total > 0) {
      slot.bar.max = total;
      slot.bar.value = done;
      slot.count.textContent = `${done}/${total}`;
    } else {
      slot.bar.removeAttribute("value"); // indeterminate: started, size unknown yet
      slot.count.textContent = "…";
    }
  }

  function showJob(j) {
    setStatus(status, j.status);
    const p = j.progress || {};
    for (const [name, entry] of Object.entries(p.phases || {})) setPhase(name, entry);
    showUsage(p.tokens, p.estimated_cost);
    if (!ACTIVE.has(j.status)) cancel.remove();
    if (j.error) message.textContent = j.error;
  }

  function showUsage(tokens, cost) {
    usage.textContent = `${(tokens || 0).toLocaleString()} tokens · estimated cost $${(cost || 0).toFixed(4)}`;
  }

  showJob(job);
  return { el, showJob, setPhase, showUsage, message, status };
}

/** Follow a job's event stream into its card; refresh the record for cost now and then. */
function follow(job, card, onFinished) {
  const phases = { ...(job.progress?.phases || {}) };
  let tokens = job.progress?.tokens || 0;
  let lastRefresh = 0;
  const follower = { card, stop: () => {} };
  const refresh = async () => {
    lastRefresh = Date.now();
    try {
      follower.card.showJob(await get(`/jobs/${encodeURIComponent(job.id)}`));
    } catch {
      // the stream carries on; the next refresh may work
    }
  };
  let lastSeq = 0;
  let finished = false;
  const connect = () => stream(`/jobs/${encodeURIComponent(job.id)}/events?after=${lastSeq}`, onEvent, (err) => {
    if (finished || !err) return;
    // A dropped connection (server restart, proxy timeout): resume after the last event seen.
    follower.card.message.textContent = "Progress stream interrupted: reconnecting…";
    follower.retry = setTimeout(() => (follower.stop = connect()), 2000);
  });
  const onEvent = (name, data) => {
    const c = follower.card;
    if (data && typeof data.seq === "number") lastSeq = Math.max(lastSeq, data.seq);
    if (name === "status") {
      setStatus(c.status, data.status);
    } else if (name === "PhaseStarted") {
      phases[data.phase] = { status: "running", done: 0, total: data.total };
      c.setPhase(data.phase, phases[data.phase]);
    } else if (name === "PhaseProgress") {
      phases[data.phase] = { status: "running", done: data.done, total: data.total };
      c.setPhase(data.phase, phases[data.phase]);
      tokens = Math.max(tokens, data.tokens || 0);
      c.showUsage(tokens, job.progress?.estimated_cost);
      if (Date.now() - lastRefresh > 2000) refresh();
    } else if (name === "PhaseFinished") {
      const r = data.result || {};
      phases[data.phase] = data.end ? { status: "finished", ...data.end }
        : { status: "finished", done: r.done ?? 0, total: r.items ?? 0, skipped: r.skipped ?? 0, failed: r.failed ?? 0 };
      c.setPhase(data.phase, phases[data.phase]);
      refresh();
    } else if (name === "Message") {
      c.message.textContent = data.text;
    } else if (name === "report") {
      finished = true;
      const done = { ...job, status: data.status, error: data.error, report: data.report, progress: data.progress };
      c.showJob(done);
      get(`/jobs/${encodeURIComponent(job.id)}`).then(onFinished, () => onFinished(done));
    }
  };
  follower.stop = connect();
  const stop = () => {
    finished = true;
    clearTimeout(follower.retry);
    follower.stop();
  };
  return { get card() { return follower.card; }, set card(c) { follower.card = c; }, stop };
}

function showReport(box, job) {
  const r = job.report || {};
  if (!r.phases) {
    clear(box, ACTIVE.has(job.status) ? null : h("p", { class: "muted" }, job.error || "No report."));
    return;
  }
  const totals = r.totals || {};
  const kb = job.knowledge_base;
  clear(box,
    h("h2", {}, "Report"),
    h("p", {}, statusBadge(r.status), " ",
      `${r.documents} documents, ${r.chunks} chunks · ${totals.llm_calls ?? 0} LLM calls · `
      + `${((totals.prompt_tokens ?? 0) + (totals.completion_tokens ?? 0)).toLocaleString()} tokens · `
      + `$${(totals.estimated_cost ?? 0).toFixed(4)} · ${totals.seconds ?? 0} s`),
    r.error ? h("p", { class: "error" }, r.error) : null,
    h("table", { class: "report-table" },
      h("thead", {}, h("tr", {}, ["Phase", "Items", "Done", "Skipped", "Failed", "LLM calls", "Tokens", "Seconds"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, Object.entries(r.phases).map(([name, p]) => h("tr", {},
        h("th", { scope: "row" }, name), h("td", {}, p.items), h("td", {}, p.done), h("td", {}, p.skipped),
        h("td", {}, p.failed), h("td", {}, p.llm_calls), h("td", {}, (p.prompt_tokens || 0) + (p.completion_tokens || 0)),
        h("td", {}, p.seconds))))),
    h("h3", {}, "Pages"),
    h("p", {}, `${r.pages.created} created, ${r.pages.updated} updated, ${r.pages.unchanged} unchanged, ${r.pages.deleted} deleted`),
    r.changes?.length ? h("ul", { class: "changes" }, r.changes.slice(0, 200).map((c) => h("li", {},
      h("span", { class: "badge" }, c.action), " ",
      c.action === "deleted" ? c.slug : h("a", { href: kbPath(kb, `page/${encodeURIComponent(c.slug)}`) }, c.slug),
      c.reason ? h("span", { class: "muted" }, ` — ${c.reason}`) : null))) : null);
}
