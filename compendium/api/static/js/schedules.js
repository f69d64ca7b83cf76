// A knowledge base's schedules: cron expressions (UTC) that start compiles; add, edit, pause, delete.

import { all, del, patch, post } from "./api.js";
import { announce, clear, formatTime, h } from "./dom.js";

export async function renderSchedules(box, kb, templates) {
  const base = `/knowledge-bases/${encodeURIComponent(kb.name)}/schedules`;
  const redraw = () => renderSchedules(box, kb, templates);
  let items = [];
  try {
    items = await all(base, { limit: 200 });
  } catch (exc) {
    clear(box, h("h2", { id: "schedules-title" }, "Schedules"), h("p", { class: "error" }, exc.message));
    return;
  }
  clear(box,
    h("h2", { id: "schedules-title" }, "Schedules"),
    h("p", { class: "muted" }, "Each schedule starts a compile at the times its cron expression names, in UTC "
      + "(minute hour day month weekday: “0 3 * * *” is every day at 03:00)."),
    items.length ? h("table", { class: "schedules-table" },
      h("thead", {}, h("tr", {}, ["Cron (UTC)", "Template", "State", "Next run", ""].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, items.map((s) => scheduleRow(base, s, templates, redraw))))
      : h("p", { class: "muted" }, "No schedule: compiles start only when someone starts them."),
    addForm(base, kb, templates, redraw));
}

function templateSelect(templates, chosen, label) {
  return h("select", { "aria-label": label },
    templates.map((t) => h("option", { value: t, selected: t === chosen }, t)));
}

function scheduleRow(base, s, templates, redraw) {
  const url = `${base}/${encodeURIComponent(s.id)}`;
  const cron = h("input", { value: s.cron, size: 12, "aria-label": `Cron of schedule ${s.cron}`, spellcheck: "false" });
  const template = templateSelect(templates, s.template, `Template of schedule ${s.cron}`);
  const error = h("span", { class: "error", role: "alert" });
  const act = (body, said) => async () => {
    error.textContent = "";
    try {
      await (body ? patch(url, body) : del(url));
      announce(said);
      redraw();
    } catch (exc) {
      error.textContent = exc.message;
    }
  };
  return h("tr", { "data-schedule": s.id, "data-enabled": String(s.enabled) },
    h("td", {}, cron),
    h("td", {}, template),
    h("td", {}, h("span", { class: `badge ${s.enabled ? "succeeded" : "paused"}` }, s.enabled ? "active" : "paused")),
    h("td", {}, s.enabled ? formatTime(s.next_run_at) : "—"),
    h("td", { class: "row-actions" },
      h("button", { type: "button", class: "secondary",
        onclick: () => act({ cron: cron.value.trim(), template: template.value }, "Schedule saved")() }, "Save"),
      h("button", { type: "button", class: "secondary",
        onclick: act({ enabled: !s.enabled }, s.enabled ? "Schedule paused" : "Schedule resumed") },
      s.enabled ? "Pause" : "Resume"),
      h("button", { type: "button", class: "danger", "aria-label": `Delete schedule ${s.cron}`,
        onclick: act(null, "Schedule deleted") }, "Delete"),
      error));
}

function addForm(base, kb, templates, redraw) {
  const cron = h("input", { id: "new-schedule-cron", placeholder: "0 3 * * *", size: 12, required: true, spellcheck: "false" });
  const template = templateSelect(templates, kb.default_template, "Template of the new schedule");
  const error = h("span", { class: "error", role: "alert" });
  return h("form", {
    class: "toolbar",
    onsubmit: async (ev) => {
      ev.preventDefault();
      error.textContent = "";
      try {
        await post(base, { cron: cron.value.trim(), template: template.value });
        announce("Schedule added");
        redraw();
      } catch (exc) {
        error.textContent = exc.message;
      }
    },
  }, h("label", { for: "new-schedule-cron" }, "New schedule, cron (UTC)"), cron, template,
  h("button", { type: "submit" }, "Add schedule"), error);
}
