// The side panel that shows a source passage or a relation beside the page or canvas.

import { clear } from "./dom.js";

let returnFocus = null;

export function openPanel(title, ...content) {
  const panel = document.getElementById("side-panel");
  document.getElementById("side-title").textContent = title;
  clear(document.getElementById("side-body"), ...content);
  if (panel.hidden) returnFocus = document.activeElement;
  panel.hidden = false;
  document.getElementById("side-close").focus();
}

export function panelBody() {
  return document.getElementById("side-body");
}

export function closePanel() {
  const panel = document.getElementById("side-panel");
  if (panel.hidden) return;
  panel.hidden = true;
  returnFocus?.focus?.();
  returnFocus = null;
}

export function installPanel() {
  document.getElementById("side-close").addEventListener("click", closePanel);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") closePanel();
  });
}
