"""The "What if" panel in a real browser: moving a cap changes the saving and the chart."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import expect

from tests.core.whatif.traces import sundry_run
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("WHATIF_SCREENSHOTS")
"""A folder to save the panel's screenshots in (light and dark), to look at them."""


@pytest.fixture
def sundry_trace():
    return trace_upload(files=[("sundry.jsonl", sundry_run())], name="sundry").trace


def _growth_saved(page) -> int:
    """Tokens the drawn 'with the fixes' bars save against the actual ones."""
    return page.evaluate(
        """() => {
          const data = document.getElementById('chart-whatif_growth').data;
          const sum = (ys) => ys.reduce((a, b) => a + b, 0);
          return sum(data[0].y) - sum(data[1].y);
        }"""
    )


def test_moving_a_cap_changes_the_saving_and_the_chart(page, sundry_trace):
    page.goto(f"/traces/{sundry_trace.pk}/#what-if")
    panel = page.locator("#what-if")
    expect(panel.locator("#chart-whatif_growth .main-svg").first).to_be_visible(timeout=60_000)
    saving = panel.locator('[data-usd-saved="cap-results"]')
    expect(saving).to_have_text("$0.0027")  # the default cap, 800: 100 tokens x 9 requests
    before = _growth_saved(page)

    cap = panel.get_by_role("spinbutton", name="get_order")
    cap.fill("340")
    expect(saving).to_have_text("$0.015")  # 5,040 tokens at $3 per million
    expect(panel.get_by_text("8,100 → 3,060 tokens")).to_be_visible()
    page.wait_for_function(
        "() => document.getElementById('chart-whatif_growth').layout.title.text.includes('fewer')"
        " && document.getElementById('what-if-state').textContent === 'Updated.'"
    )
    # Combined with clearing after 3 requests (which already replaces the order from
    # call 7 on), the lower cap changes the three requests 4, 5 and 6: 460 tokens each.
    assert _growth_saved(page) == before + 3 * (800 - 340)
    assert "cap%3Aget_order=340" in page.url  # the view is shareable

    # The cache lifetime is a parameter too: the cost chart is redrawn with its label.
    panel.get_by_label("Cache lifetime").select_option("1h")
    expect(panel.locator("#chart-whatif_cost")).to_contain_text("Cumulative cost")

    # The suggested caps set the field for you: the threshold brings back the first figure.
    panel.get_by_role("button", name="Cap get_order at the oversized threshold, 800 tokens").click()
    expect(cap).to_have_value("800")
    expect(saving).to_have_text("$0.0027")
    panel.get_by_role("button", name="No cap for get_order").click()
    expect(saving).to_have_text("$0")
    assert page.js_errors == []


def test_the_panel_in_light_and_dark(page, sundry_trace, tmp_path):
    page.goto(f"/traces/{sundry_trace.pk}/?cap:get_order=340#what-if")
    panel = page.locator("#what-if")
    expect(panel.locator("#chart-whatif_cost .main-svg").first).to_be_visible(timeout=60_000)
    folder = SHOTS or str(tmp_path)
    page.evaluate("window.scrollTo(0, 0)")
    clip = page.evaluate(
        """() => {
          const box = document.getElementById('what-if').getBoundingClientRect();
          return {x: box.left + scrollX, y: box.top + scrollY, width: box.width,
                  height: box.height};
        }"""
    )
    page.screenshot(path=os.path.join(folder, "what-if-light.png"), full_page=True, clip=clip)
    page.get_by_role("button", name="Switch light or dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.wait_for_timeout(300)
    page.screenshot(path=os.path.join(folder, "what-if-dark.png"), full_page=True, clip=clip)
    assert os.path.getsize(os.path.join(folder, "what-if-dark.png")) > 10_000
    assert page.js_errors == []
