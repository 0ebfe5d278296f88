"""A page whose socket misses messages still ends up with the stored trace (issue 26): a
hole before a later message is asked for at once, a lost last message is fetched by the
periodic ping, and after the trace closes the page holds every stored event, once.

The frames are lost between the server and the page (Playwright's websocket routing drops
them), so the server, the channel layer and the page's script are the real ones.
"""

from __future__ import annotations

import re
import threading

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.live.conftest import in_fresh_thread
from tests.live.events import agent_lines, ndjson
from tests.live.servers import daphne
from tests.live.test_live_browser import call_numbers, post, server_setup  # noqa: F401

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = pytest.mark.browser


def test_a_page_that_missed_frames_converges_on_the_stored_trace(server_setup):  # noqa: F811
    in_fresh_thread(converge, *server_setup)


def converge(env, log_path, port) -> None:
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            with daphne(env, log_path, port) as base:
                lossy_page(browser, base)
        finally:
            browser.close()


class Lossy:
    """Forwards the socket both ways, dropping what the server sends while `dropping`."""

    def __init__(self) -> None:
        self.dropping = threading.Event()
        self.dropped = 0

    def route(self, page_side) -> None:
        server_side = page_side.connect_to_server()

        def to_page(message) -> None:
            if self.dropping.is_set():
                self.dropped += 1
            else:
                page_side.send(message)

        server_side.on_message(to_page)
        page_side.on_message(lambda message: server_side.send(message))


def lossy_page(browser, base: str) -> None:
    lines = agent_lines(5)  # 19 lines: call 1 is lines 0-4, then 4 lines per call
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    lossy = Lossy()
    page.route_web_socket("**/ws/traces/**", lossy.route)
    trace = post(base + "/api/traces?live=1&name=lossy")
    lines_url = f"{base}/api/traces/{trace['id']}/lines"
    post(f"{lines_url}?offset=0", ndjson(lines[:5]))  # call 1
    html = page.goto(trace["url"]).text()
    rendered = int(re.search(r'data-after="(\d+)"', html).group(1))  # the page's own events
    expect(page.locator(".live-connection")).to_have_text("following")
    rows = page.locator("table.calls tbody tr")
    expect(rows).to_have_count(1)

    # Call 2's messages never reach the page; call 3's reveal the hole, which is asked for.
    lossy.dropping.set()
    post(f"{lines_url}?offset=5", ndjson(lines[5:9]))
    page.wait_for_timeout(1500)  # Playwright routes frames only inside its own calls
    lossy.dropping.clear()
    assert lossy.dropped
    post(f"{lines_url}?offset=9", ndjson(lines[9:13]))
    expect(rows).to_have_count(3)
    assert call_numbers(page) == ["1", "2", "3"]

    # Call 4's messages are lost: the periodic ping brings them, or, when the report's
    # refresh is broadcast after the drop ends, the hole it reveals is asked for.
    dropped = lossy.dropped
    resumes = page.evaluate("window.loopInspectorLive.counts().resumes")
    lossy.dropping.set()
    post(f"{lines_url}?offset=13", ndjson(lines[13:17]))
    page.wait_for_timeout(1500)  # Playwright routes frames only inside its own calls
    lossy.dropping.clear()
    assert lossy.dropped > dropped
    expect(rows).to_have_count(4, timeout=15_000)
    caught_up = page.evaluate("window.loopInspectorLive.counts()")
    assert caught_up["pings"] >= 1 or caught_up["resumes"] > resumes, caught_up

    post(f"{lines_url}?offset=17", ndjson(lines[17:]))
    post(f"{base}/api/traces/{trace['id']}/close")
    expect(page.locator(".live-badge")).to_have_text("closed")
    page.wait_for_function("() => !window.loopInspectorLive.connected()")  # final catch-up done
    assert call_numbers(page) == ["1", "2", "3", "4", "5"]
    held = page.evaluate("window.loopInspectorLive.lastSeq()")
    counts = page.evaluate("window.loopInspectorLive.counts()")
    # Each message after the page's own was taken once, in order.
    assert counts["applied"] + counts["skipped"] == held - rendered
    page.reload()  # the stored trace: its last event's seq, and the same rows
    assert int(page.locator("#live-tail").get_attribute("data-after")) == held
    assert call_numbers(page) == ["1", "2", "3", "4", "5"]
    assert errors == []
    context.close()
