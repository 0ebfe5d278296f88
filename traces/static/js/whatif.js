// The trace page's "What if" panel: when a cap, K or the cache lifetime changes, ask
// the server to recompute (what-if.json), swap in its rendered results and redraw the
// two charts through charts.js ("loop:figure" events). Without JavaScript the form
// submits to the page itself and the server renders the same thing. On a live page,
// live_figures.js asks again ("loop:what-if-stale") once the trace closes, and at every
// report for a reader who chose their own parameters; a reader who changed nothing gets
// the server's default parameters and inputs back, as a reload would draw them. A live
// page opened before the trace had a report has an empty panel: the first report's
// "state" message brings the panel, drawn by the server (what-if.json?panel=1).
(function () {
  "use strict";
  var keepingPlace = window.LoopInspector.keepingPlace; // keep_place.js
  if (!window.fetch) return;
  var form = document.querySelector("form.what-if-controls");
  if (form) { follow(form); return; }
  var waiting = document.querySelector("[data-live-figures='what-if-panel']");
  if (!waiting) return;
  var asked = false;
  document.addEventListener("loop:state", function (event) {
    var figures = event.detail && event.detail.figures;
    if (asked || !figures || !figures.what_if) return;
    asked = true;
    var seq = event.detail.seq;
    fetch(waiting.dataset.endpoint + "?panel=1", { credentials: "same-origin" })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (data) {
        if (!data || typeof data.panel_html !== "string") { asked = false; return; }
        keepingPlace(function () {
          waiting.insertAdjacentHTML("afterend", data.panel_html); // the server's template, escaped
          waiting.remove();
        });
        var drawn = document.querySelector("form.what-if-controls");
        if (drawn) follow(drawn);
        var results = document.getElementById("what-if-results");
        if (results) results.setAttribute("data-answers-seq", String(seq));
        Object.keys(data.figures || {}).forEach(function (key) {
          document.dispatchEvent(new CustomEvent("loop:figure", { detail: { key: key, figure: data.figures[key] } }));
        });
      })
      .catch(function () { asked = false; }); // the next report asks again
  });

  // The panel's behaviour, once its form is on the page.
  function follow(form) {
    var results = document.getElementById("what-if-results");
    var state = document.getElementById("what-if-state");
    var endpoint = form.dataset.endpoint;
    var timer = null;
    var latest = 0;

    var WINDOW_FIELDS = ["loop", "start", "window", "spacing"];

    // The form's parameters; `windowOnly`: only the diagram window's (the server's default
    // what-if parameters, as a reload would choose them).
    function query(windowOnly) {
      var params = new URLSearchParams();
      new FormData(form).forEach(function (value, key) {
        if (!windowOnly || WINDOW_FIELDS.indexOf(key) >= 0) params.append(key, value);
      });
      return params.toString();
    }

    // A live page whose reader changed nothing takes the inputs the server would draw now.
    function takeInputs(data) {
      var caps = form.querySelector("[data-live-figures='what-if-caps']");
      if (caps && typeof data.caps_html === "string") {
        caps.innerHTML = data.caps_html; // rendered and escaped by the server's template
        showPresets();
      }
      var params = data.params || {};
      var clear = form.querySelector("input[name='clear_after']");
      if (clear) clear.value = params.clear_after === null ? "" : String(params.clear_after);
      var lifetime = form.querySelector("select[name='cache_lifetime']");
      if (lifetime && params.cache_lifetime) lifetime.value = params.cache_lifetime;
      ["drop_unused", "batch"].forEach(function (name) {
        var box = form.querySelector("input[type='checkbox'][name='" + name + "']");
        if (box) box.checked = !!params[name];
      });
    }

    // fromReader: the reader changed a parameter (the address follows); else a live page
    // asks again for the same parameters, its trace having moved on (live_figures.js).
    // `seq`: the live message this answers (kept on the results: data-answers-seq).
    function recompute(fromReader, seq) {
      var ticket = ++latest;
      var defaults = !fromReader && !form.getAttribute("data-touched");
      var qs = query(defaults);
      form.setAttribute("aria-busy", "true");
      if (state && fromReader) state.textContent = "Recomputing…";
      fetch(endpoint + "?" + qs, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (reply) {
          if (!reply.ok) throw new Error("HTTP " + reply.status);
          return reply.json();
        })
        .then(function (data) {
          if (ticket !== latest) return; // a newer request is on its way
          var swap = function () {
            results.innerHTML = data.html;
            if (defaults) takeInputs(data);
          };
          if (fromReader) swap(); // the reader is at the form, above what changes
          else keepingPlace(swap);
          Object.keys(data.figures || {}).forEach(function (key) {
            document.dispatchEvent(
              new CustomEvent("loop:figure", { detail: { key: key, figure: data.figures[key] } })
            );
          });
          if (fromReader && window.history && window.history.replaceState) {
            window.history.replaceState(null, "", "?" + qs + "#what-if");
          }
          if (typeof seq === "number") results.setAttribute("data-answers-seq", String(seq));
          if (state && fromReader) state.textContent = "Updated.";
        })
        .catch(function (error) {
          if (ticket === latest && state) state.textContent = "Could not recompute (" + error.message + ").";
        })
        .then(function () {
          if (ticket === latest) form.removeAttribute("aria-busy");
        });
    }

    function soon(fromReader, seq) {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () { recompute(fromReader !== false, seq); }, 250);
    }

    // The reader's own parameters: a live page's figures (the defaults') no longer apply.
    function touched() {
      form.setAttribute("data-touched", "1");
      soon(true);
    }
    document.addEventListener("loop:what-if-stale", function (event) {
      soon(false, event.detail && event.detail.seq);
    });

    // Suggested caps (the tool's median result, the oversized threshold): buttons that
    // only make sense with this script, so they stay hidden without it.
    function showPresets() {
      Array.prototype.forEach.call(form.querySelectorAll(".cap-presets"), function (group) {
        group.hidden = false;
      });
    }
    showPresets();
    form.addEventListener("click", function (event) {
      var button = event.target.closest("[data-cap-for]");
      if (!button) return;
      var input = document.getElementById(button.dataset.capFor);
      if (!input) return;
      input.value = button.dataset.capValue;
      touched();
    });

    form.addEventListener("input", touched);
    form.addEventListener("change", touched);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      window.clearTimeout(timer);
      form.setAttribute("data-touched", "1");
      recompute(true);
    });
  }
})();
