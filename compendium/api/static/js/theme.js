// Light or dark: follows prefers-color-scheme until the user chooses with the header's toggle;
// the choice is remembered. A classic script in <head>, so the theme applies before first paint.
(function () {
  var KEY = "compendium-theme";
  var root = document.documentElement;
  try {
    var saved = localStorage.getItem(KEY);
    if (saved === "dark" || saved === "light") root.dataset.theme = saved;
  } catch (e) { /* storage refused: follow the system */ }
  var system = window.matchMedia("(prefers-color-scheme: dark)");
  function isDark() { return root.dataset.theme ? root.dataset.theme === "dark" : system.matches; }
  function show() {
    var button = document.getElementById("theme-toggle");
    if (button) button.textContent = isDark() ? "Light mode" : "Dark mode";
  }
  function toggle() {
    root.dataset.theme = isDark() ? "light" : "dark";
    try { localStorage.setItem(KEY, root.dataset.theme); } catch (e) { /* not remembered */ }
    show();
    window.dispatchEvent(new Event("compendium-theme")); // the canvas redraws in the new colours
  }
  system.addEventListener("change", function () {
    show();
    window.dispatchEvent(new Event("compendium-theme"));
  });
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("theme-toggle");
    if (button) button.addEventListener("click", toggle);
    show();
  });
})();
