// Live tail on the trace page: follow a running agent's loop over a websocket.
//
// Messages are {"type", "seq", "data"} with type call, call_account, tool_run, finding,
// held or state, in seq order, one per line of a frame; their data is the report's shapes
// (a call's facts and its row's marks, then its accounting once a report covers it; a
// tool run; a finding), never markup. New calls are appended to the
// call list of their loop (or a new loop section), each row built from the data by
// live_rows.js as the page's template builds it, without touching what is already there,
// so scroll position, open <details> and focus stay put. After a dropped connection the page reconnects with ?after=<last seq> (with
// exponential backoff) and gets exactly what it missed.
//
// Converging (issue 26): the page applies messages only in seq order. A frame whose first
// new seq is past last+1 (a hole) is set aside and the page asks for the hole at once
// ({"type": "resume", "after": last}); while the trace is live it pings every few seconds
// (and when the tab is shown again or the network is back), and the server answers with
// whatever the socket missed, then a pong naming the trace's stored last seq; once the
// trace is closed, one last resume makes sure the page holds every stored message before the
// socket is closed. Messages arriving together are applied in one animation frame, the
// superseded ones (an older "held" or "state", a call's older accounting) skipped: latest
// state wins for the panels and charts, no call row is ever dropped.
//
// Hooks for other page parts (sequence diagram, growth chart): every message is also
// dispatched on `document` as a CustomEvent "loop:<type>" ("loop:call", "loop:tool_run",
// "loop:finding", "loop:state") whose `detail` is the message's data, with `seq` added.
(function () {
  "use strict";

  var box = document.getElementById("live-tail");
  if (!box) return;
  var head = document.querySelector(".page-head > div");
  if (head) head.appendChild(box); // next to the trace's name, where a badge is seen

  var badge = box.querySelector(".live-badge");
  var status = box.querySelector(".live-connection");
  var lastSeq = parseInt(box.getAttribute("data-after") || "0", 10) || 0;
  var socket = null;
  var attempts = 0;
  var retryTimer = null;
  var finished = box.getAttribute("data-state") !== "live";
  var MAX_DELAY_MS = 15000;
  var PING_MS = 5000;
  var pingTimer = null;
  var askedAfter = -1; // the seq a resume is outstanding for
  var closing = false; // the final catch-up is under way
  var pending = []; // in seq order, waiting for the next animation frame
  var flushScheduled = false;
  var counts = { frames: 0, renders: 0, applied: 0, skipped: 0, resumes: 0, pings: 0 };

  function setConnection(kind, text) {
    status.setAttribute("data-connection", kind);
    status.textContent = text;
  }

  function socketUrl() {
    var scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    return scheme + "//" + window.location.host + box.getAttribute("data-socket-path") +
      "?after=" + lastSeq;
  }

  function connect() {
    retryTimer = null;
    if (finished) return;
    setConnection("connecting", "connecting…");
    var current = new WebSocket(socketUrl());
    socket = current;
    current.addEventListener("open", function () {
      attempts = 0;
      askedAfter = -1;
      setConnection("open", "following");
      startPinging();
    });
    current.addEventListener("message", function (message) {
      if (socket !== current) return;
      receiveFrame(String(message.data));
    });
    current.addEventListener("close", function () {
      if (socket === current) socket = null;
      stopPinging();
      if (!finished) scheduleReconnect();
    });
  }

  function send(value) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(value));
      return true;
    }
    return false;
  }

  function ping() {
    if (send({ type: "ping", seq: lastSeq })) counts.pings += 1;
  }

  function askFrom(after) {
    if (askedAfter === after) return; // asked already; its pong clears the flag
    if (send({ type: "resume", after: after })) {
      askedAfter = after;
      counts.resumes += 1;
    }
  }

  function startPinging() {
    stopPinging();
    pingTimer = window.setInterval(ping, PING_MS);
  }

  function stopPinging() {
    if (pingTimer !== null) window.clearInterval(pingTimer);
    pingTimer = null;
  }

  // The tab shown again or the network back: catch up now, reconnecting if need be.
  function wakeUp() {
    if (finished || document.visibilityState === "hidden") return;
    if (socket && socket.readyState === WebSocket.OPEN) { ping(); return; }
    if (socket) return; // connecting
    if (retryTimer !== null) window.clearTimeout(retryTimer);
    attempts = 0;
    connect();
  }
  document.addEventListener("visibilitychange", wakeUp);
  window.addEventListener("online", wakeUp);

  // A frame holds the messages of one batch, one JSON object per line, in seq order.
  function receiveFrame(text) {
    counts.frames += 1;
    var lines = text.split("\n");
    for (var i = 0; i < lines.length; i += 1) {
      if (!lines[i]) continue;
      var event;
      try { event = JSON.parse(lines[i]); } catch (e) { continue; }
      if (!event) continue;
      if (event.type === "pong") { onPong(event); continue; }
      if (typeof event.seq !== "number" || event.seq <= lastSeq) continue; // had it
      if (event.seq > lastSeq + 1) { askFrom(lastSeq); break; } // a hole: ask, keep order
      lastSeq = event.seq;
      askedAfter = -1;
      pending.push(event);
    }
    box.setAttribute("data-after", String(lastSeq));
    if (pending.length && !flushScheduled) {
      flushScheduled = true;
      // A hidden tab gets no animation frames: a timer keeps it current all the same.
      if (document.visibilityState === "hidden") window.setTimeout(flush, 250);
      else window.requestAnimationFrame(flush);
    }
  }

  function onPong(pong) {
    askedAfter = -1;
    var stored = typeof pong.last === "number" ? pong.last : lastSeq;
    if (stored > lastSeq) { askFrom(lastSeq); return; } // the server has more than we do
    if (closing && socket) socket.close(); // the final catch-up is done
  }

  // Everything that arrived since the last animation frame, applied at once.
  function flush() {
    flushScheduled = false;
    var batch = pending;
    pending = [];
    counts.renders += 1;
    var latest = {}; // type (or call_account:index) -> position of its latest message
    batch.forEach(function (event, position) {
      var key = supersedable(event);
      if (key) latest[key] = position;
    });
    keepingPlace(function () {
      batching = true;
      try {
        batch.forEach(function (event, position) {
          var key = supersedable(event);
          if (key && latest[key] !== position) { counts.skipped += 1; return; }
          counts.applied += 1;
          handle(event);
        });
      } finally {
        batching = false;
      }
    });
  }

  // Messages a later one of the same key replaces whole: the held messages panel, the
  // state (which redraws the pictures), a call's accounting. Calls, tool runs and
  // findings each change something of their own and are all applied.
  function supersedable(event) {
    if (event.type === "held") return "held";
    if (event.type === "state" && event.data && event.data.state === "live") return "state";
    if (event.type === "call_account" && event.data) return "call_account:" + event.data.index;
    return null;
  }

  function scheduleReconnect() {
    if (retryTimer !== null) return;
    var delay = Math.min(MAX_DELAY_MS, 500 * Math.pow(2, attempts));
    delay = Math.round(delay * (0.8 + Math.random() * 0.4));
    attempts += 1;
    setConnection("waiting", "connection lost, retrying in " + Math.max(1, Math.round(delay / 1000)) + " s");
    retryTimer = window.setTimeout(connect, delay);
  }

  function handle(event) {
    var data = event.data || {};
    if (event.type === "call") addCall(data);
    else if (event.type === "call_account") showAccount(data);
    else if (event.type === "finding") showFinding(data);
    else if (event.type === "state") showState(data);
    var detail = Object.assign({ seq: event.seq }, data);
    document.dispatchEvent(new CustomEvent("loop:" + event.type, { detail: detail }));
  }

  // -- keeping the reader's place -----------------------------------------------------------
  // Whatever is under the middle of the viewport must not move when content is inserted
  // above it (browsers without scroll anchoring would jump).
  var batching = false; // inside flush: one measurement for the whole batch

  function keepingPlace(change) {
    if (batching) { change(); return; }
    var anchor = document.elementFromPoint(window.innerWidth / 2, window.innerHeight / 2);
    var before = anchor ? anchor.getBoundingClientRect().top : null;
    change();
    if (anchor && anchor.isConnected && before !== null) {
      var shift = anchor.getBoundingClientRect().top - before;
      if (Math.abs(shift) >= 1) window.scrollBy(0, shift);
    }
  }

  // -- calls ----------------------------------------------------------------------------------
  function rowFor(url) {
    var links = document.querySelectorAll("table.calls a[href]");
    for (var i = 0; i < links.length; i += 1) {
      if (links[i].getAttribute("href") === url) return links[i].closest("tr");
    }
    return null;
  }

  function loopBody(loop) {
    var title = document.getElementById("loop-" + loop) || document.getElementById("loop-0");
    var section = title && title.closest("section");
    return section ? section.querySelector("table.calls tbody") : null;
  }

  function newLoopSection(loop) {
    var section = document.createElement("section");
    section.className = "panel";
    section.setAttribute("aria-labelledby", "loop-" + loop);
    var title = document.createElement("h2");
    title.id = "loop-" + loop;
    title.textContent = "Loop " + loop + " ";
    var note = document.createElement("span");
    note.className = "muted small";
    note.textContent = "new while live";
    title.appendChild(note);
    section.appendChild(title);
    var blank = document.getElementById("live-calls-table");
    section.appendChild(document.importNode(blank.content, true));
    var loops = document.querySelectorAll("section > h2[id^='loop-']");
    var after = loops.length ? loops[loops.length - 1].closest("section") : document.querySelector(".two-col");
    if (after) after.insertAdjacentElement("afterend", section);
    else document.getElementById("main").appendChild(section);
    return section.querySelector("table.calls tbody");
  }

  function rowFrom(data) {
    return window.loopInspectorRows.callRow(data); // from the data, as the template does
  }

  function addCall(data) {
    if (!data.url || rowFor(data.url)) return; // already on the page
    keepingPlace(function () {
      var body = loopBody(data.loop);
      if (!body) {
        body = newLoopSection(data.loop);
        // Its first call may be listed among the side calls: bring it along.
        var earlier = data.base_call ? rowFor(data.url.replace(/\/calls\/\d+\/$/, "/calls/" + data.base_call + "/")) : null;
        if (earlier && earlier.closest(".side-calls")) body.appendChild(earlier);
      }
      var row = rowFrom(data);
      row.classList.add("live-new");
      body.appendChild(row);
    });
  }

  // Once the report covers a call: its cost and estimate, as a reload would show them.
  function showAccount(data) {
    var row = rowFor(callUrl(data.index));
    if (row) window.loopInspectorRows.showAccount(row, data);
  }

  // -- findings -------------------------------------------------------------------------------
  var findingKey = window.loopInspectorRows.findingKey;

  function findingsList() {
    var panel = document.getElementById("findings-title");
    panel = panel && panel.closest("section");
    if (!panel) return null;
    var list = panel.querySelector("ul.findings");
    if (!list) {
      list = document.createElement("ul");
      list.className = "findings";
      var none = panel.querySelector(".ok-text");
      if (none) none.remove();
      panel.appendChild(list);
    }
    return list;
  }

  function sameFinding(item, data) {
    if (item.getAttribute("data-key")) return item.getAttribute("data-key") === findingKey(data);
    var rule = item.querySelector(".rule-id");
    var message = item.querySelector(".finding-message");
    return rule && message && rule.textContent === data.rule && message.textContent === data.message;
  }

  // A finding the page shows already (by its key) is replaced: a later report may word it
  // otherwise ("re-sent in 3 requests"); a resolved one is removed.
  function removeFinding(list, data) {
    if (list) {
      Array.prototype.forEach.call(list.querySelectorAll("li.finding"), function (item) {
        if (sameFinding(item, data)) item.remove();
      });
    }
    var flags = document.querySelectorAll("td.flags a[data-key='" + CSS.escape(findingKey(data)) + "']");
    Array.prototype.forEach.call(flags, function (flag) { flag.remove(); });
  }

  function showFinding(data) {
    var list = findingsList();
    keepingPlace(function () {
      removeFinding(list, data);
      if (data.resolved) return;
      if (list) list.appendChild(findingItem(data));
      var row = data.call ? rowFor(callUrl(data.call)) : null;
      var cell = row && row.querySelector("td.flags");
      if (cell) window.loopInspectorRows.addFlag(cell, data, callUrl(data.call));
    });
  }

  function callUrl(index) {
    var path = box.getAttribute("data-socket-path").replace(/^\/ws\/traces\//, "/traces/");
    return path + "calls/" + index + "/";
  }

  function findingItem(data) {
    var item = document.createElement("li");
    item.className = "finding sev-" + data.severity;
    item.setAttribute("data-key", findingKey(data));
    var level = document.createElement("span");
    level.className = "badge badge-" + data.severity;
    level.textContent = data.severity;
    var rule = document.createElement("a");
    rule.className = "rule-id";
    rule.href = "/rules/" + encodeURIComponent(data.rule) + "/";
    rule.textContent = data.rule;
    item.append(level, " ", rule, " ");
    if (data.call) {
      var ref = document.createElement("a");
      ref.className = "call-ref";
      ref.href = callUrl(data.call);
      ref.textContent = "call " + data.call;
      item.append(ref, " ");
    }
    var message = document.createElement("span");
    message.className = "finding-message";
    message.textContent = data.message;
    item.appendChild(message);
    return item;
  }

  // -- state ----------------------------------------------------------------------------------
  function showState(data) {
    if (data.state === "live") return;
    finished = true;
    box.setAttribute("data-state", data.state || "closed");
    badge.textContent = data.state || "closed";
    setConnection("closed", "live tail ended"); // as a reload says: the figures follow (live_figures.js)
    if (retryTimer !== null) window.clearTimeout(retryTimer);
    stopPinging();
    // One last catch-up (a resume always reads the stored events, a ping may not): the
    // pong says whether anything was stored after this message.
    closing = true;
    if (!send({ type: "resume", after: lastSeq }) && socket) socket.close();
  }

  // A small handle for tests and the console: drop the socket to see it recover.
  window.loopInspectorLive = {
    lastSeq: function () { return lastSeq; },
    counts: function () { return Object.assign({}, counts); },
    ping: ping,
    drop: function () { if (socket) socket.close(); },
    connected: function () { return socket !== null && socket.readyState === WebSocket.OPEN; }
  };

  if (!finished) connect();
})();
