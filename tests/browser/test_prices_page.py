"""Cost never silently unknown, in a real browser: the trace page names the unpriced
model, its link opens the Prices form filled in, saving it re-prices the trace. The
pages fit a 390 px phone. Screenshots (light and dark) go to $INSPECTOR_SCREENSHOTS."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_share_links import shoot
from tests.core.test_library_prices import AFTER, dated_calls
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MODEL = "acme-frontier-9"


def overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def test_set_a_price_from_the_unknown_cost_note(page):
    trace = trace_upload(files=[("acme.jsonl", dated_calls(MODEL, AFTER))], name="acme run").trace
    page.goto(f"/traces/{trace.pk}/")
    expect(page.locator(".stat-note a")).to_have_text(f"no price for {MODEL}")
    note = page.locator(".unpriced").first
    expect(note).to_contain_text(f"Cost unknown for {MODEL}")
    note.scroll_into_view_if_needed()
    shoot(page, "trace-unpriced")
    note.get_by_role("link", name=f"Set a price for {MODEL}").click()
    expect(page.get_by_role("heading", name="Prices", exact=True)).to_be_visible()
    expect(page.get_by_label("Model (as the traces name it)")).to_have_value(MODEL)
    page.get_by_label(re.compile(r"^Input")).fill("4")
    page.get_by_label(re.compile(r"^Output")).fill("8")
    shoot(page, "prices-form")
    page.get_by_role("button", name="Save price").click()
    expect(page.get_by_text(f"Price for {MODEL} saved. Re-pricing 1 trace.")).to_be_visible()
    expect(page.get_by_role("row", name=re.compile(MODEL))).to_contain_text("$4.0")
    shoot(page, "prices-saved")
    page.set_viewport_size({"width": 390, "height": 844})
    assert overflow(page) <= 0
    shoot(page, "prices-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"/traces/{trace.pk}/")
    expect(page.locator(".unpriced")).to_have_count(0)
    expect(page.locator(".cost-lines dd").first).to_have_text("$0.0048")
    assert not page.js_errors
