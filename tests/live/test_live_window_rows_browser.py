"""While live, a multi-loop page's call tables show the diagram's window, as a reload
does (issue 24): the live tail appended every loop's every call row, so the live page
listed rows a reload leaves out (another loop's calls, calls outside the window).

A real daphne, a real Chromium, and the corpus's multi-loop claude-trace session (64
calls: a 13-call loop, a 3-call one, 48 side calls) tailed while the page is open; the
rows a reader sees live are compared with those of a fresh load, before the close.
"""

from __future__ import annotations

import time

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.conftest import CORPUS
from tests.live.conftest import in_fresh_thread
from tests.live.servers import daphne
from tests.live.test_live_browser import post, server_setup  # noqa: F401
from tests.live.test_live_figures_browser import get

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = [pytest.mark.browser, pytest.mark.corpus]

SESSION = CORPUS / "claude_trace_jsonl" / "claude-trace-dev_test-traffic.jsonl"
BATCH = 8
VISIBLE_ROWS = """() => {
  const href = (row) => row.querySelector("a[href*='/calls/']").getAttribute("href");
  const sections = [...document.querySelectorAll("section.panel")]
    .filter((s) => s.querySelector("h2[id^='loop-']") && !s.querySelector(".side-calls"));
  const seen = (s) => [...s.querySelectorAll("table.calls tbody tr")].filter((r) => r.offsetParent !== null);
  const side = [...document.querySelectorAll(".side-calls table.calls tbody tr")].map(href);
  return {
    loops: sections.filter((s) => seen(s).length > 1).flatMap((s) => seen(s).map(href)),
    shown: sections.flatMap((s) => seen(s).map(href)).concat(side),
  };
}"""
"""The call rows a reader sees in the loop sections of more than one call, in page order;
and every call row shown (a live page gives a one-call loop a section of its own, a reload
lists it among the side calls)."""


def test_live_call_rows_are_windowed_as_a_reload(server_setup):  # noqa: F811
    if not SESSION.is_file():
        pytest.skip(f"the public trace corpus is not present at {CORPUS}")
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
    lines = SESSION.read_bytes().splitlines(keepends=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    trace = post(base + "/api/traces?live=1&name=multi-loop-rows")
    lines_url = f"{base}/api/traces/{trace['id']}/lines"
    page.goto(trace["url"])
    expect(page.locator(".live-connection")).to_have_text("following", timeout=60_000)
    for start in range(0, len(lines), BATCH):
        post(f"{lines_url}?offset={start}", b"".join(lines[start : start + BATCH]))
    calls_card = page.locator("dl.stats dd[data-card='calls']")
    expect(calls_card).to_contain_text("64", timeout=60_000)
    # The last report's redraw: the page's diagram is the one diagram.json draws now.
    deadline = time.monotonic() + 60
    wanted = get(f"{base}/traces/{trace['id']}/diagram.json")["window"]
    while page.locator("#diagram-window-heading").text_content().strip() == "" or (
        page.evaluate("document.getElementById('sequence').dataset.drawnSeq || '0'") == "0"
    ):
        assert time.monotonic() < deadline, "the page never redrew"
        time.sleep(0.3)
    page.wait_for_function(
        "(heading) => document.getElementById('diagram-window-heading').textContent.includes(heading)",
        arg=f"in loop {wanted['loop']}",
    )
    page.wait_for_timeout(1500)  # the redraw's rows placed

    fresh = context.new_page()
    fresh.goto(trace["url"])
    expect(fresh.locator(".live-badge")).to_have_text("live", timeout=60_000)
    reloaded = fresh.evaluate(VISIBLE_ROWS)
    assert reloaded["loops"], "the reload lists the window's calls"
    live = page.evaluate(VISIBLE_ROWS)
    assert live["loops"] == reloaded["loops"]
    assert set(live["shown"]) <= set(reloaded["shown"])
    assert page.locator(".live-badge").text_content() == "live"
    assert errors == []
    context.close()
