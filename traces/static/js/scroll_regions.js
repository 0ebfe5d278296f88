// A table wider than its .table-wrap (or a diff wider than its box) scrolls sideways
// there: such a box becomes a named, focusable region, so the keyboard can scroll it too
// (WCAG 2.1.1, axe's scrollable-region-focusable). A box that fits stays out of the tab
// order, and is checked again whenever it or what it holds changes size.
(function () {
  "use strict";
  var SELECTOR = ".table-wrap, .diff";

  function heading(box) {
    var caption = box.querySelector("caption");
    if (caption && caption.id) return caption;
    var labelled = box.closest("[aria-labelledby]");
    var named = labelled && document.getElementById(labelled.getAttribute("aria-labelledby"));
    return named || null;
  }

  function check(box) {
    if (box.hasAttribute("tabindex") && !box.hasAttribute("data-scroll-region")) return;  // the template's own
    var scrolls = box.scrollWidth > box.clientWidth + 1;
    if (scrolls === box.hasAttribute("data-scroll-region")) return;
    if (!scrolls) {
      ["data-scroll-region", "tabindex", "role", "aria-labelledby", "aria-label"].forEach(function (name) {
        box.removeAttribute(name);
      });
      return;
    }
    box.setAttribute("data-scroll-region", "");
    box.setAttribute("tabindex", "0");
    box.setAttribute("role", "region");
    var named = heading(box);
    if (named) box.setAttribute("aria-labelledby", named.id);
    else box.setAttribute("aria-label", box.classList.contains("diff") ? "Diff, scrolls sideways" : "Table, scrolls sideways");
  }

  var seen = new WeakSet();
  var sizes = new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { check(entry.target.closest(SELECTOR) || entry.target); });
  });
  function watch() {
    Array.prototype.forEach.call(document.querySelectorAll(SELECTOR), function (box) {
      if (seen.has(box)) return;
      seen.add(box);
      sizes.observe(box);
      if (box.firstElementChild) sizes.observe(box.firstElementChild);
      check(box);
    });
  }
  watch();
  // Panels redrawn in place (the what-if results, live rows) bring new boxes.
  var pending = false;
  new MutationObserver(function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; watch(); });
  }).observe(document.body, { childList: true, subtree: true });
})();
