"""Waiting for the page's charts as a reader gets them: charts.js draws a chart only once
it comes near the viewport (after the page's first idle moment), so a test scrolls each
chart it needs into view until Plotly has drawn it."""

from __future__ import annotations

# Polled by wait_for_function: scroll the first chart not drawn yet into view, and say
# whether every chart matching the selector is drawn.
SCROLL_UNTIL_DRAWN = """(selector) => {
  const charts = [...document.querySelectorAll(selector)];
  const waiting = charts.find((div) => !div.querySelector(".main-svg"));
  if (!waiting) return true;
  waiting.scrollIntoView({ block: "center" });
  return false;
}"""


def wait_for_charts(
    page, selector: str = "[data-figure], [data-figure-src]", timeout: float = 60_000
) -> None:
    """Scroll each chart matching `selector` into view until every one is drawn; the
    place the reader had is restored after."""
    place = page.evaluate("[window.scrollX, window.scrollY]")
    page.wait_for_function(SCROLL_UNTIL_DRAWN, arg=selector, timeout=timeout, polling=200)
    page.evaluate("([x, y]) => window.scrollTo(x, y)", place)
