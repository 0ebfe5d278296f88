"""The trace page's charts are drawn lazily (issue 24, first idle under 1.5 s): plotly.js
(~4.5 MB, one long task to evaluate) is not fetched while the page loads, nor while no
chart is near the viewport; scrolling to the charts loads it and draws each chart."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.charts import wait_for_charts
from tests.core.long_session import make_session
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIRST_IDLE = """() => new Promise((done) => {
  const idle = () => requestIdleCallback(() => setTimeout(done, 300));
  if (document.readyState === "complete") idle(); else addEventListener("load", idle);
})"""


def test_plotly_waits_until_a_chart_is_near_the_viewport(page):
    trace = trace_upload(files=[("s.jsonl", make_session(100))], name="lazy").trace
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(f"/traces/{trace.pk}/")
    page.evaluate(FIRST_IDLE)
    assert page.locator("#chart-growth").count() == 1
    assert page.evaluate("typeof window.Plotly") == "undefined"
    assert not [url for url in fetched if "plotly" in url]
    assert page.locator("#chart-growth .main-svg").count() == 0

    page.locator("#charts-title").scroll_into_view_if_needed()
    expect(page.locator("#chart-growth .main-svg").first).to_be_visible(timeout=30_000)
    assert [url for url in fetched if url.endswith("plotly.min.js")]
    assert page.evaluate("document.getElementById('chart-growth').data.length") >= 4
    wait_for_charts(page, "[data-figure]")  # every other chart draws when reached
    assert not page.js_errors
