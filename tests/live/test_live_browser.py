"""A person watching a running agent: the trace page follows new calls without a reload,
and survives a dropped socket and a server restart without losing or doubling a call.

pytest-django's live_server speaks WSGI (no websockets), so a real daphne is started on a
file SQLite database of its own, and the browser talks to it.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.live.conftest import in_fresh_thread
from tests.live.events import agent_lines, ndjson
from tests.live.servers import daphne, free_port, migrate, server_env

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = pytest.mark.browser


def post(url: str, body: bytes = b"") -> dict:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/x-ndjson"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


@pytest.fixture
def server_setup(tmp_path):
    env = server_env(DATABASE_URL=f"sqlite:///{tmp_path / 'live.sqlite3'}")
    migrate(env)
    return env, tmp_path / "daphne.log", free_port()


def call_numbers(page) -> list[str]:
    return page.locator("table.calls tbody tr td:first-child a").all_inner_texts()


def test_the_page_follows_new_calls_through_a_dropped_socket_and_a_restart(server_setup):
    # Its own Chromium, in its own thread: the browser tests' session keeps Playwright's
    # loop running in the main thread.
    in_fresh_thread(follow_a_live_trace, *server_setup)


def follow_a_live_trace(env, log_path, port) -> None:
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            watch(browser, env, log_path, port)
        finally:
            browser.close()


def watch(browser, env, log_path, port) -> None:
    lines = agent_lines(5)  # 19 lines: calls 1-4 ask for a tool, call 5 answers
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with daphne(env, log_path, port) as base:
        trace = post(base + "/api/traces?live=1&name=watched")
        lines_url = f"{base}/api/traces/{trace['id']}/lines"
        post(f"{lines_url}?offset=0", ndjson(lines[:5]))  # call 1
        page.goto(trace["url"])
        status = page.locator(".live-connection")
        expect(page.locator(".live-badge")).to_have_text("live")
        expect(status).to_have_text("following")
        expect(page.locator("table.calls tbody tr")).to_have_count(1)
        # The reader has scrolled, opened a <details> and focused call 1's link: none of
        # that may change when rows arrive.
        # A folded block of the page, opened by the reader (made here: a one-call trace's
        # page has none of its own yet).
        page.evaluate(
            """() => { const box = document.createElement("details");
                box.id = "reader-notes"; box.innerHTML = "<summary>notes</summary>text";
                document.querySelector("main").prepend(box); box.open = true; }"""
        )
        first = page.get_by_role("link", name="Open call 1")
        first.focus()
        page.evaluate("window.scrollBy(0, -40)")
        on_screen = first.bounding_box()["y"]
        post(f"{lines_url}?offset=5", ndjson(lines[5:9]))  # call 2, no reload
        expect(page.locator("table.calls tbody tr")).to_have_count(2)
        assert call_numbers(page) == ["1", "2"]
        # The diagram follows once the report is refreshed.
        expect(
            page.locator('#sequence svg.seq.wide a.arrow[data-kind="request"][data-call="2"]')
        ).to_have_count(1, timeout=20_000)
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Open call 1"
        # What the reader looks at stays where it was, though the pictures above it grew.
        assert abs(first.bounding_box()["y"] - on_screen) <= 2
        assert page.locator("#reader-notes").evaluate("node => node.open")
        # The growth chart too, drawn with the new call once the reader scrolls to it
        # (charts.js draws a chart when it comes near the viewport).
        page.locator("#chart-growth").scroll_into_view_if_needed()
        page.wait_for_function(
            "() => { const chart = document.getElementById('chart-growth');"
            " return !!chart.data && chart.data[0].x.length === 2; }",
            timeout=60_000,
            polling=200,
        )
        first.focus()

        page.evaluate("window.loopInspectorLive.drop()")  # the socket dies
        expect(status).to_contain_text("retrying")
        post(f"{lines_url}?offset=9", ndjson(lines[9:13]))  # call 3, while disconnected
        expect(status).to_have_text("following")
        expect(page.locator("table.calls tbody tr")).to_have_count(3)

    # The server goes away and comes back on the same port; lines sent meanwhile wait.
    expect(status).to_contain_text("retrying")
    with daphne(env, log_path, port) as base:
        post(f"{lines_url}?offset=13", ndjson(lines[13:]))  # calls 4 and 5
        expect(page.locator("table.calls tbody tr")).to_have_count(5, timeout=30_000)
        assert call_numbers(page) == ["1", "2", "3", "4", "5"]
        post(f"{base}/api/traces/{trace['id']}/close")
        expect(page.locator(".live-badge")).to_have_text("closed")
        expect(status).to_have_text("live tail ended")  # as the reloaded page says
        # Nothing lost or doubled: a reload shows what the live page showed.
        page.reload()
        assert call_numbers(page) == ["1", "2", "3", "4", "5"]
    assert errors == []
    context.close()
