"""Live means live (issue 24): while a real multi-loop session streams in, the trace page's
summary figures follow it (the cards, the outcome line, the diagram's heading, "Where the
tokens went", the tool runs, the what-if panel, the findings), and once it closes the page
says what a reload says, to the character, with the badge and the outcome agreeing.

A real daphne (pytest-django's live_server has no websockets) serves the page; a real
claude-trace log from the corpus (64 calls: a 13-call loop, a 3-call one and 48 side
calls, the outcome in loop 6 while the first loop is a side call) is tailed into a live
trace a few lines at a time while the page is open. Screenshots (light and dark, 1280
and 390 px) of the closed live page go to $INSPECTOR_SCREENSHOTS when it is set. The
socket is dropped once on the way: the page reconnects and still ends where a reload is.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.conftest import CORPUS
from tests.live.conftest import in_fresh_thread
from tests.live.servers import daphne
from tests.live.test_live_browser import post, server_setup  # noqa: F401

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = [pytest.mark.browser, pytest.mark.corpus]

SESSION = CORPUS / "claude_trace_jsonl" / "claude-trace-dev_test-traffic.jsonl"
BATCH = 8

FIGURES = {
    "cards": "dl.stats",
    "outcome": "[data-live-figures='outcome']",
    "diagram heading": "#sequence-title",
    "charts heading": "#charts-title",
    "tokens": "[data-live-figures='tokens']",
    "tool runs": "[data-live-figures='tool-runs']",
    "what-if heading": "#what-if-title",
    "what-if figures": "#what-if-results",
    "findings": "section[aria-labelledby='findings-title']",
}
"""The parts of the page compared, by selector."""


@pytest.mark.parametrize("opened", ["after-a-report", "before-any-line"])
def test_the_figures_follow_the_stream_and_the_close(server_setup, opened):  # noqa: F811
    if not SESSION.is_file():
        pytest.skip(f"the public trace corpus is not present at {CORPUS}")
    in_fresh_thread(follow, *server_setup, opened == "before-any-line")


def follow(env, log_path, port, early: bool) -> None:
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            with daphne(env, log_path, port) as base:
                watch(browser, base, early)
        finally:
            browser.close()


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.loads(reply.read())


def texts(page) -> dict[str, str]:
    """Each compared part's text as a reader sees it (runs of blanks as one space)."""
    found = {}
    for name, selector in FIGURES.items():
        node = page.locator(selector)
        found[name] = " ".join(node.inner_text().split()) if node.count() else "(absent)"
    return found


def watch(browser, base: str, early: bool) -> None:
    """Tail the session into a live trace with the page open (from before its first line
    when `early`: no diagram, no report, no what-if panel yet), then compare with a reload."""
    lines = SESSION.read_bytes().splitlines(keepends=True)
    assert len(lines) == 64
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"{exc} {exc.stack}"))
    trace = post(base + "/api/traces?live=1&name=multi-loop")
    lines_url = f"{base}/api/traces/{trace['id']}/lines"
    calls_card = page.locator("dl.stats dd[data-card='calls']")
    if early:
        page.goto(trace["url"])
        expect(page.locator(".live-connection")).to_have_text("following")
        assert page.locator("#what-if form").count() == 0
        empty_calls = calls_card.text_content()
        post(f"{lines_url}?offset=0", b"".join(lines[:BATCH]))
        expect(page.locator("#what-if form.what-if-controls")).to_have_count(1, timeout=30_000)
        first_calls = calls_card.text_content()
        assert first_calls != empty_calls  # the first report's figures
    else:
        post(f"{lines_url}?offset=0", b"".join(lines[:BATCH]))
        # The first paint has a report (and so a diagram and a what-if panel) to start from.
        deadline = time.monotonic() + 30
        while get(f"{base}/traces/{trace['id']}/diagram.json")["svg"] is None:
            assert time.monotonic() < deadline, "the first report never came"
            time.sleep(0.2)
        page.goto(trace["url"])
        expect(page.locator(".live-connection")).to_have_text("following")
        first_calls = calls_card.text_content()
    expect(page.locator("[data-live-figures='outcome']")).to_contain_text("Running")
    first = texts(page)

    for start in range(BATCH, len(lines), BATCH):
        if start == 5 * BATCH:  # the socket drops: the page reconnects and catches up
            page.evaluate("window.loopInspectorLive.drop()")
        post(f"{lines_url}?offset={start}", b"".join(lines[start : start + BATCH]))
        if start == 3 * BATCH:  # mid-stream: the cards have moved on without a reload
            expect(calls_card).not_to_have_text(first_calls, timeout=30_000)
            assert page.locator(".live-badge").text_content() == "live"
            moved = texts(page)
            assert moved["cards"] != first["cards"] and moved["tokens"] != first["tokens"]
            assert "Running" in moved["outcome"]
    post(f"{base}/api/traces/{trace['id']}/close")
    expect(page.locator(".live-badge")).to_have_text("closed")
    page.wait_for_function("() => !window.loopInspectorLive.connected()")  # all stored events
    settled(page)
    expect(page.locator(".live-connection")).to_have_text("live tail ended")
    live = texts(page)
    assert "Running" not in live["outcome"] and live["outcome"].startswith("Finished")
    assert "loop 6" in live["diagram heading"]  # the outcome's loop, as a reload shows
    if not early:
        shots(page, "live")

    fresh = context.new_page()
    fresh.goto(trace["url"])
    expect(fresh.locator(".live-badge")).to_have_text("closed")
    reloaded = texts(fresh)
    assert reloaded["cards"].startswith("CALLS 64 2 loops + 48 side calls")
    assert {name: live[name] for name in FIGURES} == {name: reloaded[name] for name in FIGURES}
    assert live != first
    # Every tool-run row of the reloaded page, cell by cell, and its signature.
    rows = "[data-live-figures='tool-runs'] tbody tr"
    assert page.locator(rows).count() == fresh.locator(rows).count() > 0
    assert page.locator(rows).evaluate_all(
        "rows => rows.map(r => [r.dataset.run, r.dataset.signature, r.innerText])"
    ) == fresh.locator(rows).evaluate_all(
        "rows => rows.map(r => [r.dataset.run, r.dataset.signature, r.innerText])"
    )
    assert errors == []
    context.close()


SHOWN = {
    "what-if": "#what-if",
    "tokens-findings": ".two-col",
    "tool-runs": "[data-live-figures='tool-runs']",
}
"""The parts screenshot beside the top of the page."""


def settled(page) -> None:
    """Wait until the page holds every stored message (the final catch-up done) and has
    the answers to the closing one: its window redrawn and its what-if panel recomputed."""
    page.wait_for_function("() => !window.loopInspectorLive.connected()")
    last = page.evaluate("window.loopInspectorLive.lastSeq()")
    page.wait_for_function(
        """last => ["sequence", "what-if-results"].every((id) => {
            const node = document.getElementById(id);
            return node && Number(node.dataset.drawnSeq || node.dataset.answersSeq || 0) >= last;
        })""",
        arg=last,
    )


def shots(page, name: str) -> None:
    folder = os.environ.get("INSPECTOR_SCREENSHOTS")
    if not folder:
        return
    Path(folder).mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        page.evaluate(  # as the theme switch does (app.js): the live page is not reloaded
            """scheme => { document.documentElement.setAttribute("data-theme", scheme);
                document.dispatchEvent(new CustomEvent("themechange", { detail: scheme })); }""",
            scheme,
        )
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=f"{folder}/{name}-{scheme}-{width}-top.png")
            for part, selector in SHOWN.items():
                page.locator(selector).screenshot(
                    path=f"{folder}/{name}-{scheme}-{width}-{part}.png"
                )
    page.set_viewport_size({"width": 1280, "height": 900})
