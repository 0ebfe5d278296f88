"""The proxy session page before its first call, in a real browser: it asks the session's
status instead of reloading itself (a timed <meta refresh> is a critical axe violation),
and opens the trace as soon as the proxy records one."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live.events import agent_lines
from traces import live
from traces.capture.lines import proxy_key, proxy_trace_name

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_waiting_page_opens_the_trace_once_the_first_call_is_recorded(page, live_server):
    page.goto("/proxy/s/w10b-demo/")
    expect(page.get_by_role("status")).to_contain_text("opens its trace as soon as one is")
    assert page.locator('meta[http-equiv="refresh"]').count() == 0
    reloads: list[str] = []
    page.on("framenavigated", lambda frame: reloads.append(frame.url))
    page.wait_for_timeout(2500)  # one status request answered "nothing yet": no reload
    assert reloads == []

    trace = live.create_live_trace(
        name=proxy_trace_name("anthropic-messages", "w10b-demo"),
        capture_key=proxy_key("anthropic-messages", "w10b-demo"),
    )
    live.append_lines(trace_id=trace.pk, offset=0, lines=agent_lines(2, finish=False))
    page.wait_for_url(f"{live_server.url}/traces/{trace.pk}/", timeout=15_000)
    expect(page.get_by_role("heading", level=1)).to_contain_text("w10b-demo")
