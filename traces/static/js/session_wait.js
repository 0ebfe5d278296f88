// The proxy session page before its first call: asks the session's status every 2 s
// and opens the trace once one is recorded. It replaces a timed <meta refresh> that
// reloaded the whole page under the reader (WCAG 2.2.1, axe's meta-refresh); without
// JavaScript the page's "Check again" link does the same by hand.
(function () {
  "use strict";
  var box = document.querySelector("[data-session-status]");
  if (!box) return;
  var url = box.getAttribute("data-session-status");
  function ask() {
    if (document.hidden) { setTimeout(ask, 2000); return; }
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (status) {
        var first = status && status.traces && status.traces[0];
        if (first && first.url) window.location.href = first.url;
        else setTimeout(ask, 2000);
      })
      .catch(function () { setTimeout(ask, 2000); });
  }
  setTimeout(ask, 2000);
})();
