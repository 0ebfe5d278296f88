"""The usage page in a real browser: the Plotly chart draws (no inline script, no error),
follows the theme, and a 390 px phone scrolls no page sideways. Screenshots (light, dark,
phone) go to $INSPECTOR_SCREENSHOTS when it is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SESSIONS = (
    "claude_code_jsonl/codemie_session-196820da.jsonl",
    "claude_code_jsonl/codemie_session-3fe1b6bc.jsonl",
    "claude_code_jsonl/codemie_session-624a4a58.jsonl",
)


def _shoot(page, name: str) -> None:
    folder = os.environ.get("INSPECTOR_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def test_usage_chart_themes_and_phone(page, corpus):
    for name in SESSIONS:
        trace_upload(files=[(name, (corpus / name).read_bytes())], name=name)
    page.goto("/usage/?tz=UTC")
    chart = page.locator("#chart-usage")
    expect(chart.locator(".main-svg").first).to_be_attached(timeout=60_000)
    assert page.evaluate("document.getElementById('chart-usage').data.length") == 4
    _shoot(page, "usage-light")
    page.get_by_role("button", name="Switch light or dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    _shoot(page, "usage-dark")
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(chart.locator(".main-svg").first).to_be_attached(timeout=60_000)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    _shoot(page, "usage-phone")
    wide = page.evaluate("""() => [...document.querySelectorAll('main *')]
      .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
      .filter(e => !e.closest('.table-wrap'))
      .slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + e.getBoundingClientRect().right)""")
    assert overflow <= 0, f"the page scrolls {overflow} px sideways on a phone: {wide}"
    assert not page.js_errors, page.js_errors
