"""Playwright in a real Chromium against pytest-django's live server."""

from __future__ import annotations

import os

import pytest

from tests.browser_setup import system_chromium

playwright_api = pytest.importorskip("playwright.sync_api")

# Playwright's sync API runs an event loop in this thread; Django's ORM calls made by
# the test itself (fixtures creating data) are still synchronous and safe here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    return system_chromium()  # None: Playwright's own build, from tests/browser_setup.py


@pytest.fixture(scope="session")
def browser():
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.js_errors = errors
    yield page
    context.close()
