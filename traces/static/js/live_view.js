// Live trace page: redraw the sequence diagram and the charts in place when the server
// says the trace's report moved on ("loop:state", sent after each refreshed report).
// The call list is kept up to date by live.js; this file only redraws the pictures, and
// hands the answer on ("loop:redrawn", with the seq of the message it answers) for
// live_figures.js to fill what the page shows of the window. A page whose address names
// no loop follows the default one (the loop the outcome names, once the trace closes), as
// a reload would.
(function () {
  "use strict";
  var keepingPlace = window.LoopInspector.keepingPlace; // keep_place.js
  var script = document.getElementById("live-view-script");
  if (!script) return;
  var source = script.dataset.diagram;
  var timer = null;
  var busy = false;
  var wantedSeq = 0; // the latest "state" message's seq

  function params() {
    var form = document.querySelector("#sequence form.diagram-controls");
    var query = new URLSearchParams();
    var chosen = new URLSearchParams(window.location.search);
    if (form) {
      new FormData(form).forEach(function (value, key) { query.set(key, value); });
    }
    chosen.forEach(function (value, key) { query.set(key, value); });
    if (!chosen.has("loop")) query.delete("loop");
    return query.toString();
  }

  function redraw() {
    if (busy) { schedule(); return; }
    busy = true;
    var seq = wantedSeq;
    fetch(source + "?" + params(), { credentials: "same-origin" })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (view) {
        if (!view || !view.svg) return;
        keepingPlace(function () { draw(view); });
        document.dispatchEvent(new CustomEvent("loop:redrawn", { detail: { view: view, seq: seq } }));
      })
      .catch(function () { /* the next state message tries again */ })
      .then(function () { busy = false; });
  }

  function draw(view) {
        var holder = document.querySelector("#sequence .sequence-scroll");
        if (holder) {
          var left = holder.scrollLeft;
          holder.innerHTML = view.svg;  // built by the server's escaping SVG builder
          holder.scrollLeft = left;
        }
        var strip = document.querySelector("#sequence .overview-strip");
        if (strip && view.overview) strip.innerHTML = view.overview;
        Object.keys(view.figures || {}).forEach(function (key) {
          if (view.figures[key]) {
            document.dispatchEvent(new CustomEvent("loop:figure", { detail: { key: key, figure: view.figures[key] } }));
          }
        });
  }

  function schedule() {
    if (timer) clearTimeout(timer);
    timer = setTimeout(redraw, 250);
  }

  document.addEventListener("loop:state", function (event) {
    var seq = event.detail && event.detail.seq;
    if (typeof seq === "number" && seq > wantedSeq) wantedSeq = seq;
    schedule();
  });
})();
