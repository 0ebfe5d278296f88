// "On this machine" while a store is watched: every few seconds the page is read again
// and each store card's counts and status are replaced in place, its Import/Stop form
// kept (and with it the keyboard focus), instead of a timed <meta refresh> reloading the
// whole page under the reader (WCAG 2.2.1, axe's meta-refresh).
(function () {
  "use strict";
  var grid = document.querySelector(".store-grid[data-refresh-seconds]");
  if (!grid) return;
  var every = 1000 * Number(grid.getAttribute("data-refresh-seconds") || 10);

  function action(card) {
    var button = card.querySelector(".store-actions button");
    return button ? button.value : "";
  }

  function swap(card, fresh) {
    var form = card.querySelector(".store-actions");
    var focus = document.activeElement;
    if (action(card) !== action(fresh)) {  // started or stopped elsewhere: the whole card
      if (!card.contains(focus)) card.replaceWith(document.importNode(fresh, true));
      return;
    }
    if (card.contains(focus) && !(form && form.contains(focus))) return;  // on a link in it
    var status = card.querySelector("[role=status]");
    var freshStatus = fresh.querySelector("[role=status]");
    Array.prototype.slice.call(card.children).forEach(function (child) {
      if (child !== form && child !== status) child.remove();
    });
    Array.prototype.forEach.call(fresh.children, function (child) {
      if (child.classList.contains("store-actions")) return;
      if (child === freshStatus && status) {  // a live region is updated, not replaced
        status.replaceChildren.apply(status, Array.prototype.map.call(child.childNodes, function (node) {
          return document.importNode(node, true);
        }));
        card.insertBefore(status, form);
        return;
      }
      card.insertBefore(document.importNode(child, true), form);
    });
    if (status && !freshStatus) status.remove();
    card.className = fresh.className;
  }

  function refresh() {
    fetch(window.location.pathname, { credentials: "same-origin", cache: "no-store" })
      .then(function (reply) { return reply.ok ? reply.text() : null; })
      .then(function (html) {
        if (html === null) { setTimeout(refresh, every); return; }
        var page = new DOMParser().parseFromString(html, "text/html");
        Array.prototype.forEach.call(page.querySelectorAll(".store-card[id]"), function (fresh) {
          var card = document.getElementById(fresh.id);
          if (card) swap(card, fresh);
        });
        if (page.querySelector(".store-grid[data-refresh-seconds]")) setTimeout(refresh, every);
      })
      .catch(function () { setTimeout(refresh, every); });
  }
  setTimeout(refresh, every);
})();
