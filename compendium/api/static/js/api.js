// The public HTTP API as the UI uses it: one fetch wrapper, the key in a header, JSON errors.

import { session } from "./session.js";

export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

function headers(extra = {}) {
  const out = { Accept: "application/json", ...extra };
  if (session.key) out.Authorization = `Bearer ${session.key}`;
  return out;
}

export async function request(method, path, body, { signal } = {}) {
  const init = { method, headers: headers(), signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (exc) {
    if (exc.name === "AbortError") throw exc;
    throw new ApiError(0, "network", "the server cannot be reached");
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const err = data?.error || {};
    const ex = new ApiError(response.status, err.code || "http_error", err.message || response.statusText, err.field);
    if (response.status === 401) window.dispatchEvent(new CustomEvent("compendium:unauthorized", { detail: ex }));
    throw ex;
  }
  return data;
}

/** A text body (page HTML, Markdown); errors are the same JSON errors as elsewhere. */
export async function getText(path, { signal } = {}) {
  const response = await fetch(path, { headers: headers({ Accept: "text/html, text/plain" }), signal });
  if (!response.ok) {
    const data = await response.json().catch(() => null);
    const err = data?.error || {};
    throw new ApiError(response.status, err.code || "http_error", err.message || response.statusText, err.field);
  }
  return response.text();
}

export const get = (path, opts) => request("GET", path, undefined, opts);
export const post = (path, body, opts) => request("POST", path, body ?? {}, opts);
export const put = (path, body, opts) => request("PUT", path, body, opts);
export const patch = (path, body, opts) => request("PATCH", path, body, opts);
export const del = (path, opts) => request("DELETE", path, undefined, opts);

/**
 * POST files as multipart form data, reporting upload progress (fetch cannot): onProgress(sent,
 * total) as bytes leave. A file may come as { file, name } to send it under another name (a
 * path inside a folder). Resolves with the JSON reply; rejects with an ApiError as request() does.
 */
export function uploadFiles(path, files, { field = "files", onProgress } = {}) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const item of files) {
      const file = item instanceof Blob ? item : item.file;
      form.append(field, file, item instanceof Blob ? file.name : item.name);
    }
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    for (const [name, value] of Object.entries(headers())) xhr.setRequestHeader(name, value);
    xhr.responseType = "json";
    xhr.upload.onprogress = (ev) => onProgress?.(ev.loaded, ev.lengthComputable ? ev.total : 0);
    xhr.onerror = () => reject(new ApiError(0, "network", "the server cannot be reached"));
    xhr.onload = () => {
      const data = xhr.response;
      if (xhr.status >= 200 && xhr.status < 300) return resolve(data);
      const err = data?.error || {};
      const ex = new ApiError(xhr.status, err.code || "http_error", err.message || xhr.statusText, err.field);
      if (xhr.status === 401) window.dispatchEvent(new CustomEvent("compendium:unauthorized", { detail: ex }));
      reject(ex);
    };
    xhr.send(form);
  });
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const text = q.toString();
  return text ? `?${text}` : "";
}

/** Every item of a cursor-paged list, fetched page by page (onPage sees each page as it lands). */
export async function all(path, params = {}, { onPage, signal, max = Infinity } = {}) {
  const items = [];
  let cursor = null;
  do {
    const page = await get(path + query({ ...params, cursor }), { signal });
    items.push(...page.items);
    onPage?.(page);
    cursor = page.next_cursor;
  } while (cursor && items.length < max);
  return items;
}

/**
 * Follow a server-sent events stream with the key in a header (EventSource cannot send one).
 * onEvent(name, data) is called per event; returns a function that stops listening.
 */
export function stream(path, onEvent, onEnd) {
  const controller = new AbortController();
  (async () => {
    try {
      const response = await fetch(path, { headers: headers({ Accept: "text/event-stream" }), signal: controller.signal });
      if (!response.ok || !response.body) throw new ApiError(response.status, "stream", "the event stream failed");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value.replace(/\r\n/g, "\n");
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          dispatch(buffer.slice(0, cut), onEvent);
          buffer = buffer.slice(cut + 2);
        }
      }
      onEnd?.(null);
    } catch (exc) {
      if (exc.name !== "AbortError") onEnd?.(exc);
    }
  })();
  return () => controller.abort();
}

function dispatch(block, onEvent) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue; // a keep-alive comment
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return;
  let parsed = data.join("\n");
  try {
    parsed = JSON.parse(parsed);
  } catch {
    // not JSON: hand the text over as it is
  }
  onEvent(name, parsed);
}
