// Addresses and navigation the views share; app.js installs the router that draws each address.

let route = () => {};

// app.js hands over its router; views only ever call go() and kbPath().
export function installRouter(draw) {
  route = draw;
}

export function kbPath(kb, rest) {
  return `#/kb/${encodeURIComponent(kb)}/${rest}`;
}

export function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}
