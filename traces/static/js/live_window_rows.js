// Live trace page: the call tables show the diagram's window, as a reload does. A reload
// lists only the window's calls of the window's loop (presenters.trace_context), while
// the live tail (live.js) appends every loop's every call: a long multi-loop session
// grew a table of thousands of rows. At each redraw (live_view.js "loop:redrawn", whose
// view carries the window) and at each new call row ("loop:call"), rows outside the
// window are hidden (kept, so a window that moves back shows them at once), and a loop
// section with no row in the window is hidden with them. Side calls stay as they are,
// and so does a loop of one call so far: a reload lists it among the side calls; and
// so does the row the reader has focused.
(function () {
  "use strict";
  var shown = null;  // {loop, first, last}: the diagram's window, once one is drawn

  function rowCall(row) {
    var link = row.querySelector("a[href*='/calls/']");
    var match = link && /\/calls\/(\d+)\/$/.exec(link.getAttribute("href"));
    return match ? Number(match[1]) : null;
  }

  function sectionLoop(section) {
    var title = section.querySelector("h2[id^='loop-']");
    return title ? Number(title.id.slice(5)) : null;
  }

  // The row holding the reader's focus is never hidden: hiding it would drop the focus
  // (to the page's body) under a reader who is tabbing through the calls.
  function focused(row) {
    return row.contains(document.activeElement);
  }

  function apply() {
    if (!shown) return;
    var sections = document.querySelectorAll("section.panel");
    Array.prototype.forEach.call(sections, function (section) {
      var loop = sectionLoop(section);
      if (loop === null || section.querySelector(".side-calls")) return;
      var body = section.querySelector("table.calls tbody");
      if (!body) return;
      if (loop !== shown.loop && body.rows.length === 1) {  // a side call, as a reload lists it
        body.rows[0].hidden = false;
        section.hidden = false;
        return;
      }
      var inWindow = 0;
      Array.prototype.forEach.call(body.rows, function (row) {
        var call = rowCall(row);
        var keep = loop === shown.loop && call !== null && call >= shown.first && call <= shown.last;
        keep = keep || focused(row);
        row.hidden = !keep;
        if (keep) inWindow += 1;
      });
      section.hidden = inWindow === 0 && loop !== shown.loop;
    });
  }

  document.addEventListener("loop:redrawn", function (event) {
    var view = (event.detail || {}).view;
    var meta = view && view.window;
    if (!meta || !meta.first_call) return;
    shown = { loop: Number(meta.loop), first: Number(meta.first_call), last: Number(meta.last_call) };
    apply();
  });
  // A new call: only its row is placed (the whole table is placed at each redraw).
  document.addEventListener("loop:call", function (event) {
    var data = event.detail || {};
    if (!shown || !data.url || !window.CSS) return;
    var link = document.querySelector("table.calls a[href='" + CSS.escape(data.url) + "']");
    var row = link && link.closest("tr");
    var section = row && row.closest("section.panel");
    if (!section || section.querySelector(".side-calls")) return;
    var keep = Number(data.loop) === shown.loop ? data.index >= shown.first && data.index <= shown.last
      : section.querySelectorAll("table.calls tbody tr").length === 1;  // a side call so far
    keep = keep || focused(row);
    row.hidden = !keep;
    if (keep) section.hidden = false;
    else if (sectionLoop(section) !== shown.loop && !section.querySelector("tbody tr:not([hidden])")) section.hidden = true;
  });
})();
