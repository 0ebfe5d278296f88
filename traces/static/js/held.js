// The last message of each loop while a live trace is recorded (see traces.live.held_payload):
// shown at once as "may still grow", settled when its loop's next line completes it, after
// the log has been quiet for settle_seconds, or when the trace closes. Text only: every
// field is set with textContent.
(function () {
  "use strict";
  var panel = document.getElementById("held-panel");
  var list = document.getElementById("held-list");
  if (!panel || !list) return;
  var settleTimer = null;

  function item(message) {
    var li = document.createElement("li");
    li.className = "held";
    li.setAttribute("data-growing", message.complete ? "false" : "true");
    var loop = document.createElement("span");
    loop.className = "held-loop";
    loop.textContent = String(message.loop || "loop");
    var meta = document.createElement("span");
    meta.className = "muted small";
    var parts = ["line " + message.line];
    if (message.model) parts.push(String(message.model));
    if (message.tool_uses && message.tool_uses.length) parts.push("asks for " + message.tool_uses.join(", "));
    meta.textContent = parts.join(" · ");
    var state = document.createElement("span");
    state.className = "held-state";
    state.textContent = message.complete ? "complete" : "may still grow";
    li.appendChild(loop);
    li.appendChild(document.createTextNode(" "));
    li.appendChild(meta);
    li.appendChild(document.createTextNode(" "));
    li.appendChild(state);
    if (message.text) {
      var text = document.createElement("p");
      text.className = "held-text";
      text.textContent = message.text + (message.truncated ? "…" : "");
      li.appendChild(text);
    }
    return li;
  }

  function settleAll() {
    Array.prototype.forEach.call(list.querySelectorAll("li.held[data-growing='true']"), function (li) {
      li.setAttribute("data-growing", "false");
      var state = li.querySelector(".held-state");
      if (state) state.textContent = "settled (the log is quiet)";
    });
  }

  function scheduleSettle(seconds) {
    if (settleTimer !== null) window.clearTimeout(settleTimer);
    settleTimer = window.setTimeout(settleAll, Math.max(0.2, seconds || 2) * 1000);
  }

  document.addEventListener("loop:held", function (event) {
    var messages = (event.detail && event.detail.messages) || [];
    list.textContent = "";
    messages.forEach(function (message) { list.appendChild(item(message)); });
    panel.hidden = messages.length === 0;
    scheduleSettle(event.detail && event.detail.settle_seconds);
  });
  document.addEventListener("loop:call", function () { scheduleSettle(2); });
  document.addEventListener("loop:state", function (event) {
    if (event.detail && event.detail.state && event.detail.state !== "live") {
      list.textContent = "";
      panel.hidden = true; // closing turned each held message into a finished call
    }
  });
  if (list.children.length) scheduleSettle(Number(panel.getAttribute("data-settle")) || 2);
})();
