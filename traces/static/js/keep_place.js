// One helper for the scripts that change a page while it is read (live figures, the live
// pictures' redraw, the what-if panel): whatever the reader looks at (the focused
// element, else the middle of the viewport) must not move when content above it arrives
// or changes height. Loaded first (in the head, deferred), before the scripts that use it.
(function () {
  "use strict";
  window.LoopInspector = window.LoopInspector || {};
  window.LoopInspector.keepingPlace = function (change) {
    var anchor = document.activeElement && document.activeElement !== document.body
      ? document.activeElement
      : document.elementFromPoint(window.innerWidth / 2, window.innerHeight / 2);
    var before = anchor ? anchor.getBoundingClientRect().top : null;
    change();
    if (anchor && anchor.isConnected && before !== null) {
      var shift = anchor.getBoundingClientRect().top - before;
      if (Math.abs(shift) >= 1) window.scrollBy(0, shift);
    }
  };
})();
