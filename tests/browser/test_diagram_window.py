"""Moving the diagram's window in a real browser: "]" and "[", the next and previous
buttons, the overview strip and the window-size choice swap the window in place (no
navigation: the document, its `performance.timeOrigin` and its load count stay), the
heading follows, the focus stays on the control used (or goes to the new window's first
call when that control has gone), the address carries the window, Back goes back to the
previous window and a reload shows the window the address names."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.core.long_session import make_session
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEADING = "#diagram-window-heading"
ACTIVE_ID = "() => document.activeElement && document.activeElement.id"
SHOTS = os.environ.get("WINDOW_SCREENSHOTS")
"""A folder to save a screenshot of the moved window in, per width and scheme, when set."""
ACTIVE_CALL = "() => document.activeElement && document.activeElement.getAttribute('data-call')"


@pytest.fixture
def long_trace():
    """150 calls in one loop: three windows of 60 (1-60, 61-120, 121-150)."""
    return trace_upload(files=[("session.jsonl", make_session(150))], name="long").trace


def _same_document(page, origin: float, loads: list[str]) -> None:
    assert page.evaluate("performance.timeOrigin") == origin
    assert page.evaluate("window.__sameDocument") == "yes"
    assert loads == []


def _window_of_the_diagram(page) -> str:
    return page.locator("#sequence .sequence-scroll svg.seq.wide").get_attribute("data-start")


def test_the_window_moves_in_place_and_keeps_the_focus(page, long_trace):
    page.goto(f"/traces/{long_trace.pk}/#sequence")
    expect(page.locator(HEADING)).to_have_text("calls 1–60 of 150 in loop 1")
    loop = page.locator("#sequence svg.seq.wide").get_attribute("data-loop")
    origin = page.evaluate("performance.timeOrigin")
    page.evaluate("window.__sameDocument = 'yes'")
    loads: list[str] = []
    page.on("load", lambda _: loads.append("load"))
    assert page.locator("#window-prev").count() == 0

    # "]" with the focus on the next button: the window moves, the focus stays there.
    page.focus("#window-next")
    page.keyboard.press("]")
    expect(page.locator(HEADING)).to_have_text(f"calls 61–120 of 150 in loop {loop}")
    _same_document(page, origin, loads)
    assert _window_of_the_diagram(page) == "61"
    assert page.evaluate(ACTIVE_ID) == "window-next"
    assert re.search(r"[?&]start=61(&|$)", page.url) and "parts=" not in page.url
    expect(page.locator("#window-prev")).to_be_visible()  # it came back, with its address
    assert "start=1" in (page.locator("#window-prev").get_attribute("href") or "")
    assert "start=121" in (page.locator("#window-next").get_attribute("href") or "")
    current = page.locator("#sequence .overview-strip .ov-current")
    assert float(current.get_attribute("x") or 0) > 0  # the strip's highlight moved
    assert "61–120" in page.locator("[data-window-table-note]").first.inner_text()

    # A click on next: the last window. The button has nothing left to show and goes;
    # the focus moves to the new window's first call.
    page.click("#window-next")
    expect(page.locator(HEADING)).to_have_text(f"calls 121–150 of 150 in loop {loop}")
    _same_document(page, origin, loads)
    expect(page.locator("#window-next")).to_have_count(0)
    first = page.locator("#sequence svg.seq.wide a.arrow.request").first.get_attribute("data-call")
    assert page.evaluate(ACTIVE_CALL) == first
    assert (
        page.evaluate("document.activeElement.closest('svg').getAttribute('data-start')") == "121"
    )

    # Back: the previous window, still in place.
    page.go_back()
    expect(page.locator(HEADING)).to_have_text(f"calls 61–120 of 150 in loop {loop}")
    _same_document(page, origin, loads)
    assert "start=61" in page.url

    # "[" and a click on previous, with the focus on the button.
    page.focus("#window-prev")
    page.keyboard.press("[")
    expect(page.locator(HEADING)).to_have_text(f"calls 1–60 of 150 in loop {loop}")
    _same_document(page, origin, loads)
    expect(page.locator("#window-prev")).to_have_count(0)
    assert page.evaluate(ACTIVE_CALL) is not None  # the first call of the window

    # The overview strip's region of the last window, then the window size.
    page.locator("#sequence .overview-strip a[aria-label='Show calls 121–150']").click()
    expect(page.locator(HEADING)).to_have_text(f"calls 121–150 of 150 in loop {loop}")
    page.focus("#sequence select[name=window]")
    page.select_option("#sequence select[name=window]", "120")
    expect(page.locator(HEADING)).to_have_text(f"calls 1–120 of 150 in loop {loop}")
    assert page.evaluate("document.activeElement.name") == "window"
    _same_document(page, origin, loads)
    assert "window=120" in page.url

    # "]" from a call of the diagram: that call went with its window; the focus goes to
    # the new window's first call. "[" with the focus nowhere leaves it there.
    page.locator("#sequence svg.seq.wide a.arrow.request").nth(3).focus()
    page.keyboard.press("]")
    expect(page.locator(HEADING)).to_have_text(f"calls 121–150 of 150 in loop {loop}")
    first = page.locator("#sequence svg.seq.wide a.arrow.request").first
    expect(first).to_be_focused()
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("[")
    expect(page.locator(HEADING)).to_have_text(f"calls 1–120 of 150 in loop {loop}")
    assert page.evaluate("document.activeElement === document.body")
    _same_document(page, origin, loads)

    # A reload (a shared link) shows the window the address names.
    page.goto(page.url)
    expect(page.locator(HEADING)).to_have_text(f"calls 1–120 of 150 in loop {loop}")
    assert page.js_errors == []


@pytest.mark.parametrize(
    ("width", "scheme", "layout"),
    [(1280, "light", "wide"), (1280, "dark", "wide"), (390, "light", "compact"),
     (390, "dark", "compact")],
)  # fmt: skip
def test_a_moved_window_on_a_desktop_and_a_phone(
    browser, live_server, long_trace, width, scheme, layout
):
    context = browser.new_context(
        viewport={"width": width, "height": 900}, base_url=live_server.url, color_scheme=scheme
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"/traces/{long_trace.pk}/#sequence")
        origin = page.evaluate("performance.timeOrigin")
        page.click("#window-next")
        expect(page.locator(HEADING)).to_contain_text("calls 61–120 of 150")
        assert page.evaluate(ACTIVE_ID) == "window-next"
        page.click("#window-next")
        expect(page.locator(HEADING)).to_contain_text("calls 121–150 of 150")
        # The next button went: the focus is on the first call of the layout shown.
        shown = page.locator(f"#sequence svg.seq.{layout} a.arrow.request").first
        expect(shown).to_be_focused()
        assert page.evaluate("performance.timeOrigin") == origin
        page.click("#window-prev")
        expect(page.locator(HEADING)).to_contain_text("calls 61–120 of 150")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.evaluate("document.getElementById('sequence').scrollIntoView()")
            page.evaluate("window.scrollBy(0, -80)")  # the sticky bar
            page.screenshot(path=f"{SHOTS}/window-{width}-{scheme}.png")
        assert errors == []
    finally:
        context.close()
