// Building DOM safely: text is always text; the only HTML we insert is re-sanitised here first.

/** h("a", {href: "#/x", class: "y", onclick: fn}, "text", child) -> Element. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      el.className = value;
    } else if (name === "style" && typeof value === "object") {
      Object.assign(el.style, value); // CSSOM, not a style attribute: allowed by our CSP
    } else if (name === "dataset") {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(name, "");
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// The API already sanitises page HTML (nh3). This is the second lock: parse into an inert
// document (scripts never run there), keep only known tags and attributes, drop every URL that
// is not http(s), mailto, a fragment or a relative path.
const TAGS = new Set([
  "a", "abbr", "b", "blockquote", "br", "code", "del", "dd", "div", "dl", "dt", "em", "h1", "h2",
  "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "section", "small",
  "span", "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
]);
const ATTRIBUTES = new Set(["href", "title", "id", "class", "src", "alt", "colspan", "rowspan", "align", "start"]);
const DROP_WITH_CONTENT = new Set(["script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math"]);

export function safeUrl(value) {
  const url = String(value).trim();
  if (/^(https?:|mailto:|#|\/|\.|[^:]*$)/i.test(url)) return url;
  return null;
}

export function sanitisedFragment(html) {
  const parsed = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  const out = document.createDocumentFragment();
  for (const child of [...parsed.body.childNodes]) {
    const clean = cleanNode(child);
    if (clean) out.append(clean);
  }
  return out;
}

function cleanNode(node) {
  if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.data);
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  const tag = node.localName;
  if (DROP_WITH_CONTENT.has(tag)) return null;
  const children = [...node.childNodes].map(cleanNode).filter(Boolean);
  if (!TAGS.has(tag)) {
    const frag = document.createDocumentFragment(); // unknown tag: keep its text only
    frag.append(...children);
    return frag;
  }
  const el = document.createElement(tag);
  for (const attr of node.attributes) {
    if (!ATTRIBUTES.has(attr.name)) continue;
    if (attr.name === "href" || attr.name === "src") {
      const url = safeUrl(attr.value);
      if (url !== null) el.setAttribute(attr.name, url);
    } else {
      el.setAttribute(attr.name, attr.value);
    }
  }
  el.append(...children);
  return el;
}

export function formatTime(seconds) {
  if (!seconds) return "—";
  return new Date(seconds * 1000).toLocaleString();
}

export function formatAgo(seconds) {
  if (!seconds) return "never";
  const delta = Date.now() / 1000 - seconds;
  if (delta < 60) return "just now";
  if (delta < 3600) return `${Math.round(delta / 60)} min ago`;
  if (delta < 86400) return `${Math.round(delta / 3600)} h ago`;
  return `${Math.round(delta / 86400)} d ago`;
}

export function announce(text) {
  const status = document.getElementById("status");
  status.textContent = text;
  clearTimeout(announce.timer);
  announce.timer = setTimeout(() => (status.textContent = ""), 4000);
}
