// Sign-in: the user pastes an API key; it is checked against the API before it is kept.

import { ApiError, get } from "./api.js";
import { clear, h } from "./dom.js";
import { session } from "./session.js";

export function renderSignIn(main, onSignedIn) {
  main.className = "";
  const error = h("p", { class: "error", role: "alert", id: "signin-error" });
  const input = h("input", {
    id: "api-key", name: "api-key", type: "password", autocomplete: "off", required: true,
    "aria-describedby": "api-key-help signin-error", spellcheck: "false",
  });
  const form = h("form", { onsubmit: submit },
    h("label", { for: "api-key" }, "API key"),
    input,
    h("p", { id: "api-key-help", class: "muted" },
      "Run ", h("code", {}, "compendium keys create"), " in your workspace, or ask your administrator for a key. "
      + "It is kept in this browser tab only and forgotten when the tab closes."),
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  clear(main, h("section", { class: "signin", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Sign in to Compendium"), form));
  input.focus();

  async function submit(ev) {
    ev.preventDefault();
    error.textContent = "";
    const key = input.value.trim();
    if (!key) return;
    session.key = key;
    try {
      const me = await get("/me");
      if (me.admin) {
        session.key = "";
        error.textContent = "This is the admin key: it manages tenants and keys only. Sign in with a tenant's key.";
        return;
      }
      onSignedIn(me);
    } catch (exc) {
      session.key = "";
      error.textContent = exc instanceof ApiError && exc.status === 401
        ? "This key was not accepted." : `Cannot sign in: ${exc.message}`;
      input.focus();
    }
  }
}
