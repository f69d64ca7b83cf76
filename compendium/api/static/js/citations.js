// A citation's source passage in the side panel: document, heading path, the passage marked.

import { get } from "./api.js";
import { clear, h } from "./dom.js";
import { openPanel, panelBody } from "./panel.js";
import { kbApi } from "./wiki.js";

/** Open the panel on chunk `chunkId`; `sentence` (the citing text) picks what to highlight. */
export async function showPassage(kb, chunkId, sentence = "", title = "Source") {
  openPanel(title, h("p", { class: "loading" }, "Loading the passage…"));
  try {
    const chunk = await get(`${kbApi(kb)}/chunks/${encodeURIComponent(chunkId)}`);
    clear(panelBody(), passageView(chunk, sentence));
  } catch (exc) {
    clear(panelBody(), h("p", { class: "error", role: "alert" }, `This passage cannot be shown: ${exc.message}`));
  }
}

export function passageView(chunk, sentence) {
  const headings = (chunk.heading_path || []).filter(Boolean);
  return h("article", { class: "source", "data-chunk": chunk.id },
    h("p", {}, h("strong", {}, chunk.document || chunk.document_id || "Unknown document")),
    headings.length ? h("p", { class: "heading-path" }, headings.join(" › ")) : null,
    h("div", { class: "passage", tabindex: "0", "aria-label": "Source passage" }, highlight(chunk.text || "", sentence)),
    h("p", { class: "muted" }, `Passage ${chunk.id}, characters ${chunk.start}–${chunk.end} of the document.`));
}

/**
 * The chunk's text with the sentences that best support `sentence` wrapped in <mark>.
 * Word overlap is enough here: the citing sentence was written from this very passage.
 */
export function highlight(text, sentence) {
  // Odd items are the separators (kept as they were, so the passage keeps its line breaks).
  const pieces = text.split(/((?<=[.!?])[ \t]+|\s*\n\s*)/);
  const wanted = words(sentence);
  const scores = pieces.map((p, i) => (i % 2 ? -1 : overlap(words(p), wanted)));
  const best = Math.max(0, ...scores);
  return pieces.map((piece, i) => {
    if (i % 2 || !piece) return piece;
    const marked = best === 0 ? true : scores[i] >= best * 0.6; // no match: mark it all
    return marked ? h("mark", {}, piece) : piece;
  });
}

const STOP = new Set(["the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "is", "are", "be", "by", "with", "it", "its", "as", "at", "that", "this", "from"]);

function words(text) {
  return new Set(
    String(text).toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1 && !STOP.has(w)),
  );
}

function overlap(a, b) {
  let n = 0;
  for (const w of a) if (b.has(w)) n += 1;
  return n;
}
