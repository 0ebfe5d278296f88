"""A person uploading a large trace sees a progress bar that moves (records parsed, calls
rebuilt) while the server ingests it in the background, then the trace opens; a failed
one shows its reason. The server runs its queue embedded (Huey threads in daphne)."""

from __future__ import annotations

import os

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.capture.scenario import ports
from tests.live.conftest import in_fresh_thread
from tests.live.events import agent_lines, ndjson
from tests.live.servers import daphne, free_port, migrate, server_env

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

pytestmark = pytest.mark.browser

SHOTS = os.environ.get("LOOP_INSPECTOR_SHOTS", "")
"""A folder to save screenshots of the bar in (light and dark), to look at them."""


def test_a_large_upload_shows_its_progress_then_opens_the_trace(tmp_path):
    big = tmp_path / "big-loop.jsonl"
    big.write_bytes(ndjson(agent_lines(2000)))  # long enough to report progress on the way
    bad = tmp_path / "notes.jsonl"
    bad.write_bytes(b'{"hello": "world"}\n' * 30_000)
    env = server_env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'jobs.sqlite3'}",
        REDIS_URL="",
        DJANGO_SETTINGS_MODULE="tests.jobs.job_settings",
        INSPECTOR_DATA_DIR=str(tmp_path / "data"),
    )
    migrate(env)
    in_fresh_thread(upload, env, tmp_path / "daphne.log", ports() or free_port(), big, bad)


def upload(env, log_path, port, big, bad) -> None:
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            with daphne(env, log_path, port) as base:
                for scheme in ("light", "dark"):
                    page = browser.new_page(
                        viewport={"width": 1280, "height": 900}, color_scheme=scheme
                    )
                    page.set_default_timeout(60_000)
                    errors: list[str] = []
                    page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
                    page.goto(base + "/")
                    page.set_input_files("#upload-form input[type=file]", str(bad))
                    row = page.locator("#upload-progress li")
                    expect(row.locator(".error-text")).to_contain_text(
                        "notes.jsonl: No supported trace format recognised this file"
                    )
                    expect(row.locator("span.muted")).to_have_text("failed")
                    if SHOTS:
                        page.screenshot(path=f"{SHOTS}/upload-failed-{scheme}.png")

                    page.set_input_files("#upload-form input[type=file]", str(big))
                    state = page.locator("#upload-progress li.job span.muted")
                    expect(state).to_contain_text("records parsed", timeout=60_000)
                    seen = {state.inner_text()}
                    bar = page.locator("#upload-progress li.job progress")
                    if SHOTS:
                        page.screenshot(path=f"{SHOTS}/upload-progress-{scheme}.png")
                    page.wait_for_url("**/traces/*/", timeout=120_000)
                    expect(page.locator("h1")).to_contain_text("big-loop.jsonl")
                    assert seen and not errors, errors
                    assert bar.count() == 0  # the page moved on to the trace
                    page.close()
        finally:
            browser.close()
