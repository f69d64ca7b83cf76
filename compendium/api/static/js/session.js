// The signed-in API key and the chosen knowledge base, kept for this browser tab only.

const KEY = "compendium.apiKey";
const KB = "compendium.kb";

export const session = {
  get key() {
    return sessionStorage.getItem(KEY) || "";
  },
  set key(value) {
    if (value) sessionStorage.setItem(KEY, value);
    else sessionStorage.removeItem(KEY);
  },
  get kb() {
    return sessionStorage.getItem(KB) || "";
  },
  set kb(value) {
    if (value) sessionStorage.setItem(KB, value);
    else sessionStorage.removeItem(KB);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(KB);
  },
};
