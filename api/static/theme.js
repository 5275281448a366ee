// Light or dark: the reader's choice (kept in localStorage), else the system's.
// Run in <head>, before the body is drawn, so that a dark page never flashes light.
(function () {
  var KEY = "theme";
  var root = document.documentElement;
  var saved = null;
  try { saved = localStorage.getItem(KEY); } catch (e) { /* storage off: the system decides */ }
  if (saved === "dark" || saved === "light") root.dataset.theme = saved;
  function dark() {
    if (root.dataset.theme) return root.dataset.theme === "dark";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  function show(button) {
    var on = dark();
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("theme-toggle");
    if (!button) return;
    show(button);
    button.addEventListener("click", function () {
      root.dataset.theme = dark() ? "light" : "dark";
      try { localStorage.setItem(KEY, root.dataset.theme); } catch (e) { /* kept for this page only */ }
      show(button);
    });
  });
})();
