// Live trace page: every summary figure follows the stream and the close.
//
// The "state" message (after each stored report, and at close) carries the page's
// figures as data with the text the server writes for each (traces/core/outputs/
// page_figures.py, which the page's first paint reads too): the cards, the outcome line,
// "Where the tokens went", the findings' counts and order, the what-if cells and largest
// savings. What depends on the reader's own window (the diagram's heading, the tool-run
// rows of the calls it shows, the charts' loop) comes with the diagram.json answer that
// live_view.js fetches for that message ("loop:redrawn"; traces/pages/window_figures.py).
// Nothing is formatted here and nothing goes in as markup: all trace text is untrusted,
// so every string is set as textContent or an attribute value. A page that followed the
// trace to its close shows what a reload shows.
(function () {
  "use strict";
  var keepingPlace = window.LoopInspector.keepingPlace; // keep_place.js

  var box = document.getElementById("live-tail");
  if (!box) return;
  var finalSeen = box.getAttribute("data-state") !== "live";

  function all(selector, root) {
    return Array.prototype.slice.call((root || document).querySelectorAll(selector));
  }

  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      node.setAttribute(name, attributes[name]);
    });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setTitle(node, title) {
    if (title) node.setAttribute("title", title);
    else node.removeAttribute("title");
  }

  function callUrl(index) {
    var path = box.getAttribute("data-socket-path").replace(/^\/ws\/traces\//, "/traces/");
    return path + "calls/" + index + "/";
  }

  function setText(selector, text, root) {
    var node = (root || document).querySelector(selector);
    if (node && node.textContent !== text) node.textContent = text;
  }

  // -- cards ----------------------------------------------------------------------------------
  // As detail.html draws a card: text, badges (in a link when the card has one, else the
  // "ok" text), then the note's parts (text or in-page links).
  function fillCard(card) {
    var dd = document.querySelector("dl.stats dd[data-card='" + card.key + "']");
    if (!dd) return;
    dd.textContent = "";
    setTitle(dd, card.title);
    if (card.text) dd.appendChild(document.createTextNode(card.text));
    if (card.badges.length) {
      var holder = dd;
      if (card.badges_href) holder = dd.appendChild(element("a", { href: card.badges_href }));
      card.badges.forEach(function (badge, position) {
        if (card.text || position) holder.appendChild(document.createTextNode(" "));
        var span = holder.appendChild(element("span", { "class": "badge " + badge.css }, badge.text));
        setTitle(span, badge.title);
      });
    } else if (card.empty) {
      dd.appendChild(element("span", { "class": "ok-text" }, card.empty));
    }
    if (card.note.length) {
      var note = dd.appendChild(element("span", { "class": "stat-note" }));
      setTitle(note, card.note_title);
      card.note.forEach(function (part) {
        note.appendChild(part.href ? element("a", { href: part.href }, part.text)
          : document.createTextNode(part.text));
      });
    }
  }

  function fillOutcome(outcome) {
    var line = document.querySelector("[data-live-figures='outcome']");
    if (!line) return;
    line.className = "outcome-line" + (outcome.running ? "" : " outcome-" + outcome.kind);
    line.textContent = "";
    line.appendChild(element("strong", {}, outcome.strong));
    if (outcome.rest) line.appendChild(document.createTextNode(" " + outcome.rest));
    if (outcome.call) {
      line.appendChild(document.createTextNode(" "));
      line.appendChild(element("a", { href: callUrl(outcome.call) }, "Last call: #" + outcome.call));
    }
  }

  function fillTokens(tokens) {
    var panel = document.querySelector("[data-live-figures='tokens']");
    if (!panel) return;
    tokens.rows.forEach(function (row) {
      var tr = panel.querySelector("tr[data-bucket='" + row.key + "']");
      if (!tr) return;
      tr.cells[1].textContent = row.tokens_text;
      tr.cells[1].setAttribute("title", row.tokens_title);
      tr.cells[2].textContent = row.share_text;
      var bar = tr.cells[3].querySelector(".bar");
      if (bar) bar.style.width = row.bar_width;
    });
    ["input_total", "output_total", "actual", "uncached", "prefix_cached", "note"].forEach(function (key) {
      setText("[data-fig='" + key + "']", tokens[key], panel);
    });
    fillUnpriced(panel.querySelector("[data-live-figures='unpriced']"), tokens.unpriced || []);
  }

  // As templates/traces/_unpriced.html says it: the models, and a link to set each one's
  // price for a reader who may (data-prices-url), else who can.
  function fillUnpriced(box, models) {
    if (!box) return;
    box.textContent = "";
    if (!models.length) return;
    var one = models.length === 1;
    var note = box.appendChild(element("p", { "class": "unpriced small", role: "note" }));
    note.append("Cost unknown for " + models.map(function (m) { return m.model; }).join(", ") +
      ": neither ", element("code", {}, "genai-prices"),
      " nor a price set here knows " + (one ? "this model" : "these models") + ". ");
    var prices = box.getAttribute("data-prices-url");
    if (!prices) {
      note.append("A member of the project can set " + (one ? "its price" : "their prices") + ".");
      return;
    }
    models.forEach(function (m, position) {
      if (position) note.append(" · ");
      note.appendChild(element("a", { href: prices + "?model=" + m.query }, "Set a price for " + m.model));
    });
  }

  // -- findings: the report's order, and "none" once every one is resolved ---------------------
  function fillFindings(findings) {
    var title = document.getElementById("findings-title");
    var panel = title && title.closest("section");
    if (!panel) return;
    var list = panel.querySelector("ul.findings");
    if (!findings.total) {
      if (list) list.remove();
      if (!panel.querySelector(".ok-text")) {
        panel.appendChild(element("p", { "class": "ok-text" },
          "No defects found by the " + findings.rule_count + " lint rules."));
      }
      return;
    }
    if (!list) return; // its items come with the "finding" messages (live.js)
    var byKey = {};
    all("li.finding", list).forEach(function (item) {
      var key = item.getAttribute("data-key");
      (byKey[key] = byKey[key] || []).push(item);
    });
    var ordered = [];
    findings.order.forEach(function (key) {
      var items = byKey[key];
      if (items && items.length) ordered.push(items.shift());
    });
    Object.keys(byKey).forEach(function (key) {  // no longer in the report
      byKey[key].forEach(function (item) { item.remove(); });
    });
    ordered.forEach(function (item, position) {
      if (list.children[position] !== item) list.insertBefore(item, list.children[position] || null);
    });
  }

  // -- what if (the default parameters: a reader's own are recomputed by whatif.js) -------------
  function whatIfTouched() {
    var form = document.querySelector("form.what-if-controls");
    return !!(form && form.getAttribute("data-touched"));
  }

  function fillWhatIf(whatIf) {
    var results = document.getElementById("what-if-results");
    if (!results || !whatIf || whatIfTouched()) return;
    whatIf.scenarios.forEach(function (cells) {
      var row = results.querySelector("tr[data-scenario='" + CSS.escape(cells.id) + "']");
      if (!row) return;
      row.className = "what-if-row status-" + cells.status;
      var head = row.querySelector("th");
      head.textContent = cells.title;
      if (cells.status === "unknown") {
        head.append(" ", element("span", { "class": "badge badge-warn" }, "cannot compute"));
      } else if (cells.status === "none") {
        head.append(" ", element("span", { "class": "muted small" }, "nothing to change"));
      }
      ["tokens_saved", "percent_usd", "seconds_saved"].forEach(function (key) {
        setText("[data-cell='" + key + "']", cells[key], row);
      });
      var usd = row.querySelector("[data-cell='usd_saved']");
      if (usd) {
        usd.textContent = "";
        if (cells.id === "concurrent-tools") usd.textContent = cells.usd_saved;
        else usd.appendChild(element("strong", {}, cells.usd_saved));
      }
    });
    var savings = results.querySelector("[data-live-figures='savings']");
    if (!savings) return;
    savings.textContent = "";
    if (whatIf.top_savings.length) {
      savings.appendChild(element("h3", { "class": "what-if-top-title" }, "The largest savings"));
      var list = savings.appendChild(element("ol", { "class": "savings" }));
      whatIf.top_savings.forEach(function (entry) {
        var item = list.appendChild(element("li"));
        item.append(element("strong", {}, entry.instruction), ": " + entry.saving);
      });
    } else {
      savings.appendChild(element("p", { "class": "muted" },
        "No fix has a saving that can be computed on this run."));
    }
  }

  document.addEventListener("loop:state", function (event) {
    var data = event.detail || {};
    if (data.state && data.state !== "live") finalSeen = true;
    var figures = data.figures;
    if (!figures) return;
    keepingPlace(function () {
      figures.cards.forEach(fillCard);
      fillOutcome(figures.outcome);
      fillTokens(figures.tokens);
      fillFindings(figures.findings);
      fillWhatIf(figures.what_if);
    });
  });

  // -- the reader's window: heading, charts' loop, tool runs ---------------------------------
  function badge(css, text, title) {
    var span = element("span", { "class": "badge " + css }, text);
    setTitle(span, title);
    return span;
  }

  function callCell(index, empty) {
    var cell = element("td", { "class": "num" });
    cell.appendChild(index ? element("a", { href: callUrl(index) }, "#" + index) : empty);
    return cell;
  }

  // As detail.html draws a tool run's row (traces/pages/window_figures.py `run_row`).
  function runRow(run, noteBlank) {
    var row = element("tr", { "data-run": String(run.position), "data-signature": run.signature });
    var tool = row.appendChild(element("td"));
    tool.appendChild(element("span", { "class": "tag" }, run.name));
    if (run.batch_size > 1) {
      tool.append(" ", badge("badge-info", "parallel ×" + run.batch_size,
        "Asked together with " + (run.batch_size - 1) + " other call(s) in one response"));
    }
    var id = row.appendChild(element("td"));
    id.appendChild(element("code", {}, run.tool_call_id));
    if (run.transport) id.append(" ", badge("badge-info", "via " + run.transport.kind, run.transport.title));
    row.appendChild(callCell(run.call, element("span", { "class": "muted", title: "Already in the first request's history" }, "history")));
    row.appendChild(callCell(run.result_call, element("span", { "class": "muted" }, "—")));
    var status = row.appendChild(element("td"));
    status.appendChild(element("span", { "class": "status status-" + run.status }, run.status));
    if (run.pairing_label) status.append(" ", badge("badge-info", run.pairing_label[0], run.pairing_label[1]));
    if (run.is_error) {
      status.append(" ", badge("badge-error", "error result"));
    } else if (run.error_inferred) {
      status.append(" ", badge("badge-warn", "inferred error", "Not flagged as an error by the format"),
        " ", element("span", { "class": "muted small" }, run.error_inferred));
    }
    row.appendChild(element("td", { "class": "preview" }, run.preview));
    if (noteBlank) row.appendChild(noteCell(run, noteBlank));
    return row;
  }

  function noteCell(run, blank) {
    var cell = element("td");
    cell.appendChild(document.importNode(blank.content, true));
    var field = cell.querySelector("input[name='tool_run']");
    if (field) field.value = run.tool_call_id;
    var text = cell.querySelector("textarea");
    var label = text && cell.querySelector("label[for='" + text.id + "']");
    if (text) text.id = "trace-run-" + run.position + "-text";
    if (label) label.setAttribute("for", text.id);
    return cell;
  }

  // A row the page has with the same signature stays (an open note form, a focus keep);
  // the others are built anew, in the window's order.
  function fillRuns(view) {
    var section = document.querySelector("[data-live-figures='tool-runs']");
    var body = section && section.querySelector("tbody[data-fig='run-rows']");
    if (!body || !view.tool_run_rows) return;
    setText("[data-fig='runs-note']", view.runs_note, section);
    var have = {};
    all("tr[data-run]", body).forEach(function (row) {
      have[row.getAttribute("data-run") + "/" + row.getAttribute("data-signature")] = row;
    });
    var blank = document.getElementById("live-run-note");
    var rows = view.tool_run_rows.map(function (run) {
      var key = run.position + "/" + run.signature;
      var row = have[key] || runRow(run, blank);
      delete have[key];
      return row;
    });
    Object.keys(have).forEach(function (key) { have[key].remove(); });
    rows.forEach(function (row, position) {
      if (body.children[position] !== row) body.insertBefore(row, body.children[position] || null);
    });
    section.hidden = rows.length === 0;
  }

  function followLoop(view) {
    setText("[data-live-figures='window']", view.window_heading);
    setText("[data-live-figures='charts-note']", view.charts_note);
    setText("[data-live-figures='what-if-note']", view.what_if_note);
    var loopField = document.querySelector("form.what-if-controls input[name='loop']");
    if (loopField) loopField.value = String(view.loop);
    var picker = document.querySelector("#sequence form.diagram-controls [name='loop']");
    if (picker && picker.querySelector("option[value='" + view.loop + "']")) picker.value = String(view.loop);
    else if (picker && picker.tagName === "INPUT") picker.value = String(view.loop);
  }

  document.addEventListener("loop:redrawn", function (event) {
    var view = (event.detail || {}).view;
    if (!view) return;
    keepingPlace(function () {
      followLoop(view);
      fillRuns(view);
    });
    // While live, the what-if charts follow every report with the server's default
    // parameters (diagram.json's what_if_figures), as its cells do (fillWhatIf); the
    // details are the server's to recompute once at the close, and for a reader who
    // chose their own parameters at every report (whatif.js redraws their charts).
    if (!finalSeen && !whatIfTouched()) {
      var whatIfFigures = view.what_if_figures || {};
      Object.keys(whatIfFigures).forEach(function (key) {
        document.dispatchEvent(new CustomEvent("loop:figure", { detail: { key: key, figure: whatIfFigures[key] } }));
      });
    }
    if (finalSeen || whatIfTouched()) {
      document.dispatchEvent(new CustomEvent("loop:what-if-stale",
        { detail: { final: finalSeen, seq: event.detail.seq } }));
    }
    var sequence = document.getElementById("sequence");
    if (sequence) sequence.setAttribute("data-drawn-seq", String(event.detail.seq || 0));
  });
})();
