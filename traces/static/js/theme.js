// Applies the saved theme before first paint (loaded in <head>, no inline script).
(function () {
  var saved = null;
  try { saved = localStorage.getItem("loop-inspector-theme"); } catch (e) { /* private mode */ }
  var dark = saved ? saved === "dark" : window.matchMedia("(prefers-color-scheme: dark)").matches;
  document.documentElement.setAttribute("data-theme", dark ? "dark" : "light");
})();
