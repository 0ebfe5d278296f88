"""A long loop's charts in a real browser: fetched (not embedded), each drawn within the
point budget under the Content-Security-Policy, redrawn on a theme change, and a
recomputed what-if still redraws its two charts."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.charts import wait_for_charts
from tests.core.long_session import make_session
from traces.core.outputs.render.downsample import POINT_BUDGET
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHARTS = ("growth", "cost", "timeline", "resend_results", "resend_by_tool", "whatif_growth")


def test_a_long_loop_fetches_and_draws_every_chart(page):
    trace = trace_upload(files=[("long.jsonl", make_session(2_400))], name="long").trace
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"/traces/{trace.pk}/")
    assert page.locator("script#figure-growth").count() == 0  # fetched, not embedded
    wait_for_charts(page, ", ".join(f"#chart-{key}" for key in CHARTS))
    for key in CHARTS:
        expect(page.locator(f"#chart-{key} .main-svg").first).to_be_visible(timeout=30_000)
    longest = page.evaluate(
        """(keys) => keys.map((k) => Math.max(...document.getElementById('chart-' + k).data
              .map((t) => (t.x || t.y || []).length)))""",
        list(CHARTS),
    )
    assert max(longest) <= POINT_BUDGET
    assert longest[0] == POINT_BUDGET  # 2,400 calls grouped into 2,000 bars
    label = page.locator("#chart-growth").get_attribute("aria-label")
    assert label.startswith("Transcript growth") and "groups of" in label
    before = page.evaluate("document.getElementById('chart-growth').layout.font.color")
    page.locator("#theme-toggle").click()
    after = page.evaluate("document.getElementById('chart-growth').layout.font.color")
    assert before != after  # a fetched chart follows the theme too
    title = "document.getElementById('chart-whatif_growth').layout.title.text"
    first = page.evaluate(title)
    page.locator("input[name='clear_after']").fill("1")
    page.locator("input[name='clear_after']").dispatch_event("change")
    page.wait_for_function(f"(first) => {title} !== first", arg=first, timeout=30_000)
    assert problems == []
