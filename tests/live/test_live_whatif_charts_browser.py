"""While live, the what-if charts follow the stream (issue 24): each report redraws them
with the server's default parameters (diagram.json's what_if_figures), as the panel's
cells already followed it; before, they moved only at the close.

A real daphne (websockets) on its own SQLite file; a real Chromium; a one-loop agent
session tailed a few calls at a time while the page shows the what-if panel.
"""

from __future__ import annotations

import time

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.live.conftest import in_fresh_thread
from tests.live.events import agent_lines, ndjson
from tests.live.servers import daphne
from tests.live.test_live_browser import post, server_setup  # noqa: F401
from tests.live.test_live_figures_browser import get

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = pytest.mark.browser

DRAWN = """(id) => { const d = document.getElementById(id);
  return d && d.data ? JSON.stringify(d.data.map((t) => [t.x, t.y])) : null; }"""
"""What a chart draws: each of its traces' points."""


def test_the_what_if_charts_follow_each_report(server_setup):  # noqa: F811
    in_fresh_thread(follow, *server_setup)


def follow(env, log_path, port) -> None:
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            with daphne(env, log_path, port) as base:
                watch(browser, base)
        finally:
            browser.close()


def watch(browser, base: str) -> None:
    lines = agent_lines(9)  # 35 lines: four per tool-asking call, two for the last
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    trace = post(base + "/api/traces?live=1&name=what-if-live")
    lines_url = f"{base}/api/traces/{trace['id']}/lines"
    post(f"{lines_url}?offset=0", ndjson(lines[:9]))  # calls 1 and 2
    deadline = time.monotonic() + 60  # the first report, so the page has its panel
    while get(f"{base}/traces/{trace['id']}/diagram.json")["svg"] is None:
        assert time.monotonic() < deadline, "the first report never came"
        time.sleep(0.2)
    page.goto(trace["url"])
    expect(page.locator(".live-badge")).to_have_text("live", timeout=60_000)
    expect(page.locator("table.calls tbody tr")).to_have_count(2, timeout=60_000)
    page.locator("#chart-whatif_growth").scroll_into_view_if_needed()
    expect(page.locator("#chart-whatif_growth .main-svg").first).to_be_visible(timeout=60_000)
    expect(page.locator("#chart-whatif_cost .main-svg").first).to_be_visible(timeout=60_000)
    growth, cost = (page.evaluate(DRAWN, f"chart-whatif_{key}") for key in ("growth", "cost"))
    assert growth and cost

    post(f"{lines_url}?offset=9", ndjson(lines[9:25]))  # calls 3 to 6, still live
    expect(page.locator("table.calls tbody tr")).to_have_count(6, timeout=60_000)
    for key, drawn in (("growth", growth), ("cost", cost)):
        page.wait_for_function(
            f"([id, was]) => ({DRAWN})(id) !== was", arg=[f"chart-whatif_{key}", drawn]
        )
    assert page.evaluate("document.getElementById('chart-whatif_growth').data[0].x.length") == 6
    assert page.locator(".live-badge").text_content() == "live"  # not the close's redraw
    assert errors == []
    context.close()
