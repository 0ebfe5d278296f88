// The trace page's call row, built in the browser from a live event's data.
//
// A live "call" event carries the call's facts in the report's shape and its row's marks
// (core.report_types.LiveCallEntry); this builds the same row as the page's template
// (templates/traces/_call_rows.html) does from the stored call: the same cells, classes,
// links, titles and numbers, the numbers formatted as traces/core/formatting.py does.
// All trace text is untrusted: it only ever goes in as textContent or an attribute value,
// never as markup. tests/live/test_live_rows_browser.py compares the two rows.
(function () {
  "use strict";

  // -- numbers, as traces/core/formatting.py and Django's intcomma write them -------------
  // Python rounds a tie (a value exactly halfway, which only a binary fraction with few
  // bits can be) to even; toFixed rounds it up. Exactly halfway at `digits` decimals means
  // value * 2^(digits+1) is an odd whole number (multiplying by a power of two is exact).
  function fixed(value, digits) {
    var scaled = value * Math.pow(2, digits + 1);
    if (Number.isInteger(scaled) && Math.abs(scaled % 2) === 1) {
      var low = Math.floor(value * Math.pow(10, digits));
      var even = low % 2 === 0 ? low : low + 1;
      return (even / Math.pow(10, digits)).toFixed(digits);
    }
    return value.toFixed(digits);
  }

  function grouped(text) {  // "-1234567.5" -> "-1,234,567.5"
    var parts = text.split(".");
    parts[0] = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return parts.join(".");
  }

  function missing(value) { return value === null || value === undefined || value === ""; }

  function intcomma(value) { return grouped(String(Math.trunc(Number(value)))); }

  function tokens(value) {
    if (missing(value)) return "—";
    var number = Number(value);
    if (Math.abs(number) >= 1000000000) return fixed(number / 1000000000, 2) + " G";
    if (Math.abs(number) >= 1000000) return fixed(number / 1000000, 2) + " M";
    if (Math.abs(number) >= 10000) return fixed(number / 1000, 1) + " k";
    return intcomma(number);
  }

  function money(value) {
    if (missing(value)) return "unknown";
    var number = Number(value);
    if (number < 0) return "-" + money(-number);
    if (number === 0) return "$0";
    if (number >= 1) return "$" + grouped(fixed(number, 2));
    if (number >= 0.01) return "$" + fixed(number, 3);
    if (number >= 0.001) return "$" + fixed(number, 4);
    if (number < 0.000005) return "<$0.00001";  // never "$0.00000" (formatting.money)
    return "$" + fixed(number, 5);
  }

  function duration(value) {
    if (missing(value)) return "—";
    var number = Number(value);
    if (number < 0) return "-" + duration(-number);
    if (number >= 3600) {
      var whole = Math.trunc(number);
      return Math.floor(whole / 3600) + " h " + Math.floor((whole % 3600) / 60) + " min";
    }
    if (number >= 60) return Math.floor(number / 60) + " min " + Math.trunc(number % 60) + " s";
    if (number >= 1 || number === 0) return fixed(number, 1) + " s";
    return fixed(number * 1000, 0) + " ms";
  }

  function printed(value) {  // a value as the template prints it ({{ value }})
    if (value === null || value === undefined) return "None";
    if (value === true) return "True";
    if (value === false) return "False";
    return String(value);
  }

  // -- elements -----------------------------------------------------------------------------
  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      node.setAttribute(name, attributes[name]);
    });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A model name with a <wbr> after each "/", "-" and ".", its only break points (the
  // template's `breakable` filter).
  function breakable(tag, attributes, text) {
    var node = element(tag, attributes);
    var part = "";
    Array.from(String(text)).forEach(function (char) {
      part += char;
      if (char === "/" || char === "-" || char === ".") {
        node.appendChild(document.createTextNode(part));
        node.appendChild(document.createElement("wbr"));
        part = "";
      }
    });
    if (part) node.appendChild(document.createTextNode(part));
    return node;
  }

  function findingKey(finding) {
    return [finding.rule, finding.call, finding.tool_call_id, finding.loop].join("|");
  }

  // A finding's badge in its call's Flags cell.
  function flag(finding, callUrl) {
    return element("a", {
      "class": "badge badge-" + finding.severity,
      "href": callUrl + "#findings",
      "title": finding.message,
      "data-key": findingKey(finding)
    }, finding.rule);
  }

  // A call's flags are in the report's order of its findings: by severity, rule and tool
  // call id (core.analysis.rules.registry.run_rules); a new one takes its place there.
  var SEVERITY_ORDER = { error: 0, warning: 1, info: 2 };

  function flagOrder(severity, rule, toolCallId) {
    return [severity in SEVERITY_ORDER ? SEVERITY_ORDER[severity] : 3, rule, toolCallId || ""];
  }

  function orderOfBadge(badge) {  // data-key: rule|call|tool call id|loop
    var parts = (badge.getAttribute("data-key") || "").split("|");
    var severity = (badge.getAttribute("class") || "").replace(/^badge badge-/, "");
    return flagOrder(severity, badge.textContent, parts.slice(2, -1).join("|"));
  }

  function before(a, b) {
    for (var i = 0; i < a.length; i += 1) {
      if (a[i] < b[i]) return true;
      if (a[i] > b[i]) return false;
    }
    return false;
  }

  function addFlag(cell, finding, callUrl) {
    var order = flagOrder(finding.severity, finding.rule, finding.tool_call_id);
    var next = Array.prototype.find.call(cell.children, function (badge) {
      return before(order, orderOfBadge(badge));
    });
    cell.insertBefore(flag(finding, callUrl), next || null);
  }

  function numberCell(value) {
    return element("td", { "class": "num", "title": intcomma(value) }, tokens(value));
  }

  function messagesCell(data) {
    var cell = element("td", { "class": "num" }, intcomma(data.messages));
    if (data.base_call) {
      cell.append(" ", element("span", {
        "class": "muted",
        "title": intcomma(data.appended) + " new since call " + data.base_call
      }, "+" + intcomma(data.appended)));
    }
    if (data.history_rewritten) {
      cell.append(" ", element("span", {
        "class": "badge badge-info",
        "title": "Does not extend call " + printed(data.base_call) + ": history was rewritten"
      }, "rewrite"));
    }
    return cell;
  }

  function stopCell(data) {
    var cell = element("td");
    if (data.status === "error") {
      cell.appendChild(element("span", { "class": "badge badge-error", "title": data.error || "" },
        "error" + (data.http_status ? " " + data.http_status : "")));
    } else {
      cell.appendChild(element("span", { "class": "stop stop-" + (data.stop_reason || "none") },
        data.stop_reason || "—"));
    }
    return cell;
  }

  function toolsCell(names) {
    var cell = element("td", { "class": "tools" });
    if (!names || !names.length) cell.appendChild(element("span", { "class": "muted" }, "—"));
    (names || []).forEach(function (name) {
      cell.appendChild(element("span", { "class": "tag" }, name));
    });
    return cell;
  }

  // The row of one call (a live event's data: core.report_types.LiveCallEntry).
  function callRow(data) {
    var row = element("tr", { "class": data.status === "error" ? "row-error" : "" });
    var number = element("td", { "class": "num" });
    number.appendChild(element("a", {
      "href": data.url,
      "aria-label": "Open call " + data.index
    }, String(data.index)));
    row.append(number, breakable("td", { "class": "model", "title": data.model || "" }, data.model || "—"), messagesCell(data));
    if (data.input_tokens !== null && data.input_tokens !== undefined) {
      var input = data.input_tokens + data.cache_read_tokens + data.cache_write_tokens;
      row.append(numberCell(input), numberCell(data.cache_read_tokens),
        numberCell(data.output_tokens));
    } else {
      row.append(
        element("td", { "class": "num muted", "title": "estimated with tiktoken" },
          "≈ " + tokens(data.estimated_input)),
        element("td", { "class": "num muted" }, "—"),
        element("td", { "class": "num muted" }, "—"));
    }
    row.append(stopCell(data), toolsCell(data.tool_names),
      element("td", { "class": "num" }, money(data.cost_usd)),
      element("td", { "class": "num" }, duration(data.duration_s)));
    var flags = element("td", { "class": "flags" });
    (data.findings || []).forEach(function (finding) { flags.appendChild(flag(finding, data.url)); });
    row.appendChild(flags);
    return row;
  }

  // The cells a report's accounting fills in, in the template's order: the input (an
  // estimate, for a call that reported no usage) and the cost.
  var INPUT_CELL = 3;
  var COST_CELL = 8;

  // A row (built here or by the template) once the report covers its call: the marks
  // from the report's accounting (core.report_types.LiveCallAccountEntry).
  function showAccount(row, account) {
    var cost = row.cells[COST_CELL];
    if (cost) cost.textContent = money(account.cost_usd);
    var input = row.cells[INPUT_CELL];
    if (input && input.getAttribute("title") === "estimated with tiktoken") {
      input.textContent = "≈ " + tokens(account.estimated_input);
    }
  }

  window.loopInspectorRows = {
    callRow: callRow,
    showAccount: showAccount,
    addFlag: addFlag,
    flag: flag,
    findingKey: findingKey,
    format: { tokens: tokens, money: money, duration: duration, intcomma: intcomma }
  };
})();
