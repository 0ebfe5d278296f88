// The trace page's "What if" panel: when a cap, K or the cache lifetime changes, ask
// the server to recompute (what-if.json), swap in its rendered results and redraw the
// two charts through charts.js ("loop:figure" events). Without JavaScript the form
// submits to the page itself and the server renders the same thing.
(function () {
  "use strict";
  var form = document.querySelector("form.what-if-controls");
  if (!form || !window.fetch) return;
  var results = document.getElementById("what-if-results");
  var state = document.getElementById("what-if-state");
  var endpoint = form.dataset.endpoint;
  var timer = null;
  var latest = 0;

  function query() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      params.append(key, value);
    });
    return params.toString();
  }

  function recompute() {
    var ticket = ++latest;
    var qs = query();
    form.setAttribute("aria-busy", "true");
    if (state) state.textContent = "Recomputing…";
    fetch(endpoint + "?" + qs, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (reply) {
        if (!reply.ok) throw new Error("HTTP " + reply.status);
        return reply.json();
      })
      .then(function (data) {
        if (ticket !== latest) return; // a newer request is on its way
        results.innerHTML = data.html;
        Object.keys(data.figures || {}).forEach(function (key) {
          document.dispatchEvent(
            new CustomEvent("loop:figure", { detail: { key: key, figure: data.figures[key] } })
          );
        });
        if (window.history && window.history.replaceState) {
          window.history.replaceState(null, "", "?" + qs + "#what-if");
        }
        if (state) state.textContent = "Updated.";
      })
      .catch(function (error) {
        if (ticket === latest && state) state.textContent = "Could not recompute (" + error.message + ").";
      })
      .then(function () {
        if (ticket === latest) form.removeAttribute("aria-busy");
      });
  }

  function soon() {
    window.clearTimeout(timer);
    timer = window.setTimeout(recompute, 250);
  }

  // Suggested caps (the tool's median result, the oversized threshold): buttons that
  // only make sense with this script, so they stay hidden without it.
  Array.prototype.forEach.call(form.querySelectorAll(".cap-presets"), function (group) {
    group.hidden = false;
  });
  form.addEventListener("click", function (event) {
    var button = event.target.closest("[data-cap-for]");
    if (!button) return;
    var input = document.getElementById(button.dataset.capFor);
    if (!input) return;
    input.value = button.dataset.capValue;
    soon();
  });

  form.addEventListener("input", soon);
  form.addEventListener("change", soon);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    window.clearTimeout(timer);
    recompute();
  });
})();
