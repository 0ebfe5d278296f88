// Trace page: move the sequence diagram's window in place. The previous/next buttons,
// "[" and "]" (app.js clicks those buttons), the overview strip's regions and the spacing
// and window-size choices fetch the new window from diagram.json?parts=window and swap
// the drawing in; the address follows (pushState, so a reload, a shared link and Back
// show the same window) and the focus stays on the control used. Without this script
// every one of those is a plain link or form, as before. A change of loop still loads
// the page: the charts and the call table follow the loop.
//
// The page is sent the wide layout alone: the compact one (phones, below 1000 px) weighs
// as much again and a desktop never shows it, so it is fetched here (layout=compact) when
// the viewport is a phone's, now or after a resize, and a move asks for the layout shown.
(function () {
  "use strict";
  var script = document.getElementById("diagram-window-script");
  var section = document.getElementById("sequence");
  if (!script || !section || !window.fetch || !window.history.pushState) return;
  var source = script.dataset.diagram;
  var inFlight = null;
  var shownSearch = window.location.search;  // the query of the window drawn
  var phone = window.matchMedia ? window.matchMedia("(max-width: 1000px)") : null;
  var fetchingLayout = null;

  // The layout the viewport shows: compact on a phone, unless every tool has its lane
  // (the reader asked for the wide drawing, scrolled sideways).
  function shownLayout() {
    if (!phone || !phone.matches) return "wide";
    var wide = section.querySelector(".sequence-scroll svg.seq.wide");
    if (wide && wide.classList.contains("all-lanes")) return "wide";
    return new URLSearchParams(shownSearch).get("lanes") === "all" ? "wide" : "compact";
  }

  // Add the layout the viewport shows when the holder lacks it (the page's first drawing
  // on a phone, or a resize across 1000 px), beside the one there: CSS picks.
  function addShownLayout() {
    var layout = shownLayout();
    var holder = section.querySelector(".sequence-scroll");
    if (!holder || holder.querySelector("svg.seq." + layout) || fetchingLayout || inFlight) return;
    if (!holder.querySelector("svg.seq")) return;  // nothing drawn yet (a live page)
    var query = new URLSearchParams(shownSearch);
    query.set("parts", "window");
    query.set("layout", layout);
    var asked = shownSearch;
    fetchingLayout = fetch(source + "?" + query.toString(), { credentials: "same-origin" })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (view) {
        if (!view || !view.svg || asked !== shownSearch || holder.querySelector("svg.seq." + layout)) return;
        var place = window.LoopInspector && window.LoopInspector.keepingPlace;
        var add = function () {
          // built by the server's escaping SVG builder; wide first, as the page's CSS expects
          holder.insertAdjacentHTML(layout === "wide" ? "afterbegin" : "beforeend", view.svg);
        };
        if (place) place(add); else add();
      })
      .catch(function () { /* the wide layout stays, scaled to the width */ })
      .then(function () {
        fetchingLayout = null;
        // Only a resize across 1000 px meanwhile asks again: a failure is not retried.
        if (shownLayout() !== layout) addShownLayout();
      });
  }
  addShownLayout();
  if (phone) {
    if (phone.addEventListener) phone.addEventListener("change", addShownLayout);
    else if (phone.addListener) phone.addListener(addShownLayout);
  }

  function currentLoop() {
    var svg = section.querySelector(".sequence-scroll svg.seq");
    return svg ? svg.getAttribute("data-loop") : null;
  }

  // A link moves the window in place when it asks this page for another window of the
  // same loop; any other link (a call's arrow, another loop) is left to the browser.
  function windowTarget(anchor) {
    var href = anchor.getAttribute("href");
    if (!href || href.charAt(0) !== "?") return null;
    var url = new URL(href, window.location.href);
    if (url.pathname !== window.location.pathname) return null;
    var loop = url.searchParams.get("loop");
    if (loop !== null && loop !== currentLoop()) return null;
    return url;
  }

  section.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    var anchor = event.target.closest ? event.target.closest("a") : null;
    if (!anchor || !section.contains(anchor) || anchor.closest(".lane-note")) return;
    var url = windowTarget(anchor);
    if (!url) return;
    event.preventDefault();
    // A click from the keyboard ("[" and "]" in app.js, Enter on a link) keeps the focus
    // where it was; a pointer's click focuses what it clicked.
    move(url, event.detail === 0 ? document.activeElement : anchor, true);
  });

  var form = section.querySelector("form.diagram-controls");
  if (form) {
    var changed = null;  // the choice whose change submits the form (app.js)
    form.addEventListener("change", function (event) { changed = event.target; });
    form.addEventListener("submit", function (event) {
      var query = new URLSearchParams();
      new FormData(form).forEach(function (value, key) { query.set(key, value); });
      if (query.get("loop") !== currentLoop()) return;  // another loop: load its page
      event.preventDefault();
      var url = new URL("?" + query.toString() + "#sequence", window.location.href);
      move(url, changed || event.submitter || document.activeElement, true);
      changed = null;
    });
  }

  window.addEventListener("popstate", function () {
    if (window.location.search === shownSearch) return;  // only the hash moved
    var url = new URL(window.location.href);
    var loop = url.searchParams.get("loop");
    if (loop !== null && loop !== currentLoop()) { window.location.reload(); return; }
    move(url, null, false);
  });

  function move(url, control, push) {
    var query = new URLSearchParams(url.search);
    query.set("parts", "window");
    // The layout of the window asked for, not of the one drawn now: leaving "every tool
    // its lane" on a phone asks for the compact drawing at once.
    var allLanes = new URLSearchParams(url.search).get("lanes") === "all";
    query.set("layout", allLanes || !phone || !phone.matches ? "wide" : "compact");
    if (inFlight) inFlight.abort();
    var controller = window.AbortController ? new AbortController() : null;
    inFlight = controller;
    section.setAttribute("aria-busy", "true");
    fetch(source + "?" + query.toString(), {
      credentials: "same-origin",
      signal: controller ? controller.signal : undefined
    })
      .then(function (reply) { return reply.ok ? reply.json() : null; })
      .then(function (view) {
        if (!view || !view.svg) { window.location.href = url.href; return; }
        if (push) {
          var shown = new URL(url.href);
          shown.searchParams.set("start", String(view.window.start));
          window.history.pushState({ diagramWindow: true }, "", shown.pathname + shown.search + "#sequence");
        }
        shownSearch = window.location.search;
        draw(view, control);
        document.dispatchEvent(new CustomEvent("loop:window", { detail: view.window }));
      })
      .catch(function (error) {
        if (error && error.name === "AbortError") return;
        window.location.href = url.href;  // the plain link still works
      })
      .then(function () {
        if (inFlight === controller) { inFlight = null; section.removeAttribute("aria-busy"); }
        if (!inFlight) addShownLayout();  // a resize while the move was on its way
      });
  }

  function draw(view, control) {
    var holder = section.querySelector(".sequence-scroll");
    var focused = document.activeElement;
    var lostFocus = focused && holder.contains(focused);
    var left = holder.scrollLeft;
    holder.innerHTML = view.svg;  // built by the server's escaping SVG builder
    holder.scrollLeft = left;
    var meta = view.window;
    var heading = document.getElementById("diagram-window-heading");
    if (heading) {
      heading.textContent = "calls " + meta.start + "\u2013" + meta.end + " of " + Number(meta.total).toLocaleString("en-US") + " in loop " + meta.loop;
    }
    neighbour("window-prev", view.previous_href, "\u2190", "Earlier calls ([)", true);
    neighbour("window-next", view.next_href, "\u2192", "Later calls (])", false);
    strip(view);
    var lanes = section.querySelector(".lane-note a");
    if (lanes && view.lanes_href) lanes.setAttribute("href", view.lanes_href);
    if (form) {
      var start = form.querySelector("input[name=start]");
      if (start) start.value = String(meta.start);
      var size = form.querySelector("select[name=window]");
      if (size) size.value = String(view.window_size);
      var spacing = form.querySelector("select[name=spacing]");
      if (spacing) spacing.value = view.spacing;
    }
    tableNote(meta);
    var kept = control && control !== document.body ? control : null;
    if (kept && kept.isConnected && visible(kept)) {
      if (document.activeElement !== kept) kept.focus();
    } else if (kept || lostFocus) {  // the control went with the old window
      var first = firstCall(holder);
      if (first) first.focus();
    }
  }

  // The previous and next buttons: their address moves on; one that has no window to
  // show any more goes, one that has one again comes back in its place.
  function neighbour(id, href, text, title, before) {
    var link = document.getElementById(id);
    if (!href) {
      if (link) link.remove();
      return;
    }
    if (!link) {
      var nav = section.querySelector("nav.overview");
      if (!nav) return;
      link = document.createElement("a");
      link.className = "button secondary";
      link.id = id;
      link.title = title;
      link.textContent = text;
      var strip = nav.querySelector(".overview-strip");
      nav.insertBefore(link, before ? strip : strip.nextSibling);
    }
    link.setAttribute("href", href);
  }

  function strip(view) {
    var overview = section.querySelector(".overview-strip svg");
    if (!overview) return;
    overview.setAttribute("data-start", String(view.window.start));
    overview.setAttribute("data-end", String(view.window.end));
    var current = overview.querySelector(".ov-current");
    if (current && view.overview_current) {
      current.setAttribute("x", String(view.overview_current.x));
      current.setAttribute("width", String(view.overview_current.width));
    }
    var title = overview.querySelector(":scope > title");
    if (title) title.textContent = view.overview_title;
  }

  // The call table lists the window the page was loaded with: say so once the diagram
  // shows another, with a link that lists the diagram's calls.
  function tableNote(meta) {
    var notes = document.querySelectorAll("[data-window-table-note]");
    Array.prototype.forEach.call(notes, function (note) {
      var listed = note.getAttribute("data-window-table-note");
      note.textContent = "";
      if (listed === meta.start + "-" + meta.end) {
        note.textContent = " \u00b7 showing calls " + meta.start + "\u2013" + meta.end + ", as in the diagram";
        return;
      }
      var bounds = listed.split("-");
      note.append(" \u00b7 showing calls " + bounds[0] + "\u2013" + bounds[1] + " (the diagram shows " + meta.start + "\u2013" + meta.end + ": ");
      var link = document.createElement("a");
      link.href = window.location.pathname + window.location.search;
      link.textContent = "list those";
      note.append(link, ")");
    });
  }

  function visible(element) {
    return element.getClientRects().length > 0;
  }

  // The first call's request arrow of whichever layout the page shows (CSS hides one).
  function firstCall(holder) {
    var arrows = holder.querySelectorAll("a.arrow.request");
    for (var n = 0; n < arrows.length; n++) {
      if (visible(arrows[n])) return arrows[n];
    }
    return arrows[0] || null;
  }
})();
