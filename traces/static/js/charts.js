// Draws the page's Plotly figures (built by the server as plain JSON) and keeps them in
// step with the light/dark theme. No inline script: data comes from
// <script type="application/json"> blocks, or, for a long loop whose figures would
// outweigh the page, from the JSON its data-figure-src names (fetched once per URL,
// `figures[data-figure-key]` drawn; a figure the server has none of removes its box).
//
// Why lazily: plotly.min.js is ~4.5 MB whose evaluation is one main-thread task of
// hundreds of milliseconds, and drawing every chart at once is another. So nothing is
// loaded before the page's first idle moment after its load event; then a chart is
// drawn only once it comes near the viewport (IntersectionObserver), Plotly being
// loaded (data-plotly on this script's tag) for the first one, one chart per task so
// the page stays responsive between them. Printing asks for every chart that is not drawn yet; a
// print made before they arrive shows those left as their headings (print again).
(function () {
  "use strict";
  var script = document.getElementById("charts-script");
  var themesBlock = document.getElementById("chart-themes");
  if (!script || !themesBlock) return;
  var themes = JSON.parse(themesBlock.textContent);
  var config = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };
  var drawn = [];       // charts Plotly has drawn: the theme follows on these
  var queue = [];       // charts near the viewport, waiting for their turn
  var plotly = null;    // the promise of window.Plotly, once asked for
  var ready = false;    // the page's first idle moment has passed
  var observer = null;

  function theme() {
    return document.documentElement.getAttribute("data-theme") === "dark" ? "dark" : "light";
  }

  function themed(layout, name) {
    var c = themes[name] || themes.light;
    var out = JSON.parse(JSON.stringify(layout));
    out.font = Object.assign({}, out.font, { color: c.font });
    if (out.legend) out.legend.font = Object.assign({}, out.legend.font, { color: c.font });
    if (out.hoverlabel) {
      out.hoverlabel.bgcolor = c.hover_bg;
      out.hoverlabel.bordercolor = c.hover_border;
      out.hoverlabel.font = Object.assign({}, out.hoverlabel.font, { color: c.font });
    }
    Object.keys(out).forEach(function (key) {
      if (/^[xy]axis\d*$/.test(key)) {
        out[key].gridcolor = c.grid;
        out[key].linecolor = c.line;
        out[key].zerolinecolor = c.line;
        out[key].tickfont = Object.assign({}, out[key].tickfont, { color: c.muted });
      }
    });
    return out;
  }

  function loadPlotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (plotly) return plotly;
    plotly = new Promise(function (resolve, reject) {
      var tag = document.createElement("script");
      tag.src = script.dataset.plotly;  // same origin: the CSP's script-src 'self'
      tag.onload = function () { resolve(window.Plotly); };
      tag.onerror = reject;
      document.head.appendChild(tag);
    });
    return plotly;
  }

  function later(work) {
    (window.requestIdleCallback || function (f) { return setTimeout(f, 0); })(work, { timeout: 500 });
  }

  // -- the figures a chart draws from ------------------------------------------------
  var sources = {};  // data-figure-src URL: the promise of its answer
  function figureOf(div) {
    if (div._figure) return Promise.resolve(div._figure);
    if (div.dataset.figure) {
      var block = document.getElementById(div.dataset.figure);
      div._figure = JSON.parse(block.textContent);  // parsed only when drawn
      return Promise.resolve(div._figure);
    }
    var src = div.dataset.figureSrc;
    if (!src || !window.fetch) return Promise.resolve(null);
    sources[src] = sources[src] || fetch(src, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (reply) {
        if (!reply.ok) throw new Error("HTTP " + reply.status);
        return reply.json();
      });
    return sources[src].then(function (data) {
      var figure = (data.figures || {})[div.dataset.figureKey];
      if (!figure) { div.remove(); return null; }
      // The title is Plotly's pseudo-HTML with trace text escaped: read as text by an
      // inert parser (no script runs, no image loads there).
      var title = (figure.layout.title && figure.layout.title.text) || "";
      var parsed = new DOMParser().parseFromString(title, "text/html");
      div.setAttribute("aria-label", parsed.body.textContent);
      div.classList.remove("chart-fetched");
      div._figure = figure;
      return figure;
    }, function () {
      div.textContent = "This chart could not be loaded; the tables below hold the same numbers.";
      return null;
    });
  }

  // -- drawing, one chart per task ------------------------------------------------------
  var busy = false;
  function pump() {
    if (busy || !queue.length) return;
    busy = true;
    var div = queue.shift();
    Promise.all([loadPlotly(), figureOf(div)]).then(function (both) {
      var figure = both[1];
      if (figure && div.isConnected) draw(both[0], div, figure);
    }).catch(function () {
      div.textContent = "This chart could not be drawn; the tables below hold the same numbers.";
    }).then(function () {
      busy = false;
      later(pump);
    });
  }

  function draw(Plotly, div, figure) {
    var first = drawn.indexOf(div) < 0;
    if (first) drawn.push(div);
    div.classList.remove("chart-pending");
    var done = Plotly.react(div, figure.data, themed(figure.layout, theme()), config);
    if (first && done && done.then) {
      done.then(function () {
        // Points that carry a run's page in customdata (a set's distributions) open it.
        div.on("plotly_click", function (event) {
          var point = event && event.points && event.points[0];
          var target = point && point.customdata;
          if (typeof target === "string" && target.charAt(0) === "/") window.location.href = target;
        });
      });
    }
  }

  function want(div) {
    if (!ready || queue.indexOf(div) >= 0) return;
    if (!div._figure && !div.dataset.figure && !div.dataset.figureSrc) return;  // live: no data yet
    queue.push(div);
    pump();
  }

  function watch(div) {
    if (observer) observer.observe(div); else want(div);
  }

  function start() {
    ready = true;
    if (window.IntersectionObserver) {
      observer = new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (!entry.isIntersecting) return;
          if (drawn.indexOf(entry.target) < 0) want(entry.target);
        });
      }, { rootMargin: "600px 0px" });
    }
    Array.prototype.forEach.call(document.querySelectorAll("[data-figure], [data-figure-src], .chart-pending"), watch);
  }

  function afterFirstIdle() {
    if (document.readyState === "complete") later(start);
    else window.addEventListener("load", function () { later(start); });
  }
  afterFirstIdle();

  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("[data-figure], [data-figure-src]"), function (div) {
      if (drawn.indexOf(div) < 0) { ready = true; want(div); }
    });
  });

  document.addEventListener("themechange", function () {
    if (!window.Plotly) return;  // nothing drawn yet: each chart is drawn in the theme of its time
    drawn.forEach(function (div) {
      window.Plotly.react(div, div.data, themed(div._figure.layout, theme()), config);
    });
  });

  // Appending calls live, or a what-if recomputed: other scripts dispatch "loop:figure"
  // with {key, figure}. A drawn chart redraws now; one not drawn yet keeps the figure
  // for when it comes near the viewport.
  document.addEventListener("loop:figure", function (event) {
    var div = document.getElementById("chart-" + event.detail.key);
    if (!div) return;
    div._figure = event.detail.figure;
    if (drawn.indexOf(div) >= 0 && window.Plotly) { draw(window.Plotly, div, div._figure); return; }
    if (!ready) return;  // start() watches it
    if (observer) { observer.unobserve(div); observer.observe(div); } else want(div);
  });
})();
