// Draws the trace page's Plotly figures (built by the server as plain JSON) and keeps
// them in step with the light/dark theme. No inline script: data comes from
// <script type="application/json"> blocks, or, for a long loop whose figures would
// outweigh the page, from the JSON its data-figure-src names (fetched once per URL,
// `figures[data-figure-key]` drawn; a figure the server has none of removes its box).
(function () {
  "use strict";
  if (!window.Plotly) return;
  var themes = JSON.parse(document.getElementById("chart-themes").textContent);
  var charts = Array.prototype.slice.call(document.querySelectorAll("[data-figure]"));

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

  var config = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };
  charts.forEach(function (div) {
    var figure = JSON.parse(document.getElementById(div.dataset.figure).textContent);
    div._figure = figure;
    window.Plotly.newPlot(div, figure.data, themed(figure.layout, theme()), config).then(function () {
      // Points that carry a run's page in customdata (a set's distributions) open it.
      div.on("plotly_click", function (event) {
        var point = event && event.points && event.points[0];
        var target = point && point.customdata;
        if (typeof target === "string" && target.charAt(0) === "/") window.location.href = target;
      });
    });
  });

  var fetched = Array.prototype.slice.call(document.querySelectorAll("[data-figure-src]"));
  var sources = {};
  fetched.forEach(function (div) {
    (sources[div.dataset.figureSrc] = sources[div.dataset.figureSrc] || []).push(div);
  });
  Object.keys(sources).forEach(function (src) {
    if (!window.fetch) return;
    fetch(src, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (reply) {
        if (!reply.ok) throw new Error("HTTP " + reply.status);
        return reply.json();
      })
      .then(function (data) {
        sources[src].forEach(function (div) {
          var figure = (data.figures || {})[div.dataset.figureKey];
          if (!figure) {
            div.remove();
            return;
          }
          // The title is Plotly's pseudo-HTML with trace text escaped: read as text by
          // an inert parser (no script runs, no image loads there).
          var title = (figure.layout.title && figure.layout.title.text) || "";
          var parsed = new DOMParser().parseFromString(title, "text/html");
          div.setAttribute("aria-label", parsed.body.textContent);
          div.classList.remove("chart-fetched");
          div._figure = figure;
          charts.push(div);
          window.Plotly.newPlot(div, figure.data, themed(figure.layout, theme()), config);
        });
      })
      .catch(function () {
        sources[src].forEach(function (div) {
          div.textContent = "This chart could not be loaded; the tables below hold the same numbers.";
        });
      });
  });

  document.addEventListener("themechange", function () {
    charts.forEach(function (div) {
      window.Plotly.react(div, div.data, themed(div._figure.layout, theme()), config);
    });
  });

  // Appending calls live: other scripts dispatch "loop:figure" with {key, figure}.
  document.addEventListener("loop:figure", function (event) {
    var div = document.getElementById("chart-" + event.detail.key);
    if (!div) return;
    if (charts.indexOf(div) < 0) charts.push(div);
    div.classList.remove("chart-pending");
    div._figure = event.detail.figure;
    window.Plotly.react(div, event.detail.figure.data, themed(event.detail.figure.layout, theme()), config);
  });
})();
