"""A person watching a Claude Code session live sees the last message of each loop at
once (marked "may still grow"), settled when the log goes quiet, and turned into calls
when the trace closes, without a reload."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.capture.scenario import ports
from tests.live.conftest import in_fresh_thread
from tests.live.servers import daphne, free_port, migrate, server_env
from tests.live.test_held_messages import interleaved_lines

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = [pytest.mark.browser, pytest.mark.corpus]


def post(url: str, body: bytes = b"") -> dict:
    request = urllib.request.Request(url, data=body, method="POST")
    with urllib.request.urlopen(request, timeout=20) as reply:
        return json.loads(reply.read())


def test_the_page_shows_held_messages_then_their_calls(tmp_path):
    lines = interleaved_lines()
    env = server_env(DATABASE_URL=f"sqlite:///{tmp_path / 'held.sqlite3'}", REDIS_URL="")
    migrate(env)
    in_fresh_thread(watch, env, tmp_path / "daphne.log", ports() or free_port(), lines)


def watch(env, log_path, port, lines) -> None:
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(20_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            with daphne(env, log_path, port) as base:
                trace = post(base + "/api/traces?live=1&name=held")
                lines_url = f"{base}/api/traces/{trace['id']}/lines"
                post(f"{lines_url}?offset=0", b"\n".join(lines[:10]) + b"\n")
                page.goto(trace["url"])
                expect(page.locator(".live-connection")).to_have_text("following")
                post(f"{lines_url}?offset=10", b"\n".join(lines[10:]) + b"\n")
                held = page.locator("#held-list li.held")
                expect(held).to_have_count(2)
                expect(page.locator("#held-panel")).to_be_visible()
                expect(held.first.locator(".held-state")).to_have_text(
                    "settled (the log is quiet)"
                )  # two seconds without a line
                assert "subagent" in page.locator("#held-list").inner_text()
                post(f"{base}/api/traces/{trace['id']}/close")
                expect(page.locator("#held-panel")).to_be_hidden()
                expect(page.locator(".live-badge")).to_have_text("closed")
            assert not errors, errors
        finally:
            browser.close()
