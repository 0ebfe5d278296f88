"""The diagram in a real browser, on a desktop and a phone: a real session with more
tools than lanes and with error results. Nothing overflows sideways, error results are
red, Tab stops once per call, and the skip link moves the focus past the diagram."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.conftest import CORPUS
from traces.core.outputs.render.sequence import MAX_TOOL_LANES
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SESSION = CORPUS / "claude_code_jsonl" / "codemie_session-3fe1b6bc.jsonl"
"""67 calls, six tools (more than the diagram's lanes), five error results."""
ERROR_RED = {"light": "rgb(198, 40, 40)", "dark": "rgb(255, 123, 123)"}
SHOTS = os.environ.get("DIAGRAM_SCREENSHOTS")
"""A folder to save the four screenshots in (looked at by hand), when set."""

VISIBLE_DIAGRAM = "#sequence svg.seq.{layout}"
LANES_JS = "els => els.map(e => e.firstChild.nodeValue)"
TAB_STOPS_JS = """(svg) => [...svg.querySelectorAll('a[href]')]
    .filter(a => a.tabIndex >= 0).map(a => [a.dataset.call, a.dataset.kind])"""


@pytest.fixture
def many_tools_trace():
    if not SESSION.is_file():
        pytest.skip("corpus absent")
    return trace_upload(files=[(SESSION.name, SESSION.read_bytes())], name="many tools").trace


@pytest.mark.parametrize(
    ("width", "scheme", "layout"),
    [
        (1280, "light", "wide"),
        (1280, "dark", "wide"),
        (390, "light", "compact"),
        (390, "dark", "compact"),
    ],
)
def test_the_diagram_fits_shows_errors_red_and_stops_once_per_call(
    browser, live_server, many_tools_trace, width, scheme, layout
):
    context = browser.new_context(
        viewport={"width": width, "height": 900}, base_url=live_server.url, color_scheme=scheme
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"/traces/{many_tools_trace.pk}/#sequence")
        diagram = page.locator(VISIBLE_DIAGRAM.format(layout=layout))
        expect(diagram).to_be_visible()
        other = "compact" if layout == "wide" else "wide"
        expect(page.locator(VISIBLE_DIAGRAM.format(layout=other))).to_be_hidden()

        # No sideways page overflow, and the diagram itself fits its box on a phone.
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        scroll = page.locator("#sequence .sequence-scroll")
        assert scroll.evaluate("e => e.scrollWidth - e.clientWidth") <= 0  # no inner scroll
        box = diagram.bounding_box()
        assert box is not None
        if layout == "compact":
            assert box["x"] >= 0 and box["x"] + box["width"] <= width
            lanes = diagram.locator(".seq-lane-title").evaluate_all(LANES_JS)
            assert lanes == ["model", "your code", "tools"]
        else:
            lanes = diagram.locator(".seq-lane-title").evaluate_all(LANES_JS)
            assert lanes[-1] == "other tools" and len(lanes) == 2 + MAX_TOOL_LANES + 1

        # Error results are red, as the legend says.
        failed = diagram.locator("a.arrow.tool-error")
        assert failed.count() > 0
        stroke = failed.first.locator(".arrow-line").evaluate("e => getComputedStyle(e).stroke")
        assert stroke == ERROR_RED[scheme]
        fine = diagram.locator("a.arrow.tool-result:not(.tool-error):not(.orphan)").first
        assert fine.locator(".arrow-line").evaluate("e => getComputedStyle(e).stroke") != stroke

        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.evaluate("document.getElementById('sequence').scrollIntoView()")
            page.screenshot(path=f"{SHOTS}/diagram-{layout}-{scheme}.png")
            failed.first.scroll_into_view_if_needed()
            page.screenshot(path=f"{SHOTS}/diagram-{layout}-{scheme}-error.png")

        # One tab stop per call: the request arrow, and Tab walks call after call.
        stops = diagram.evaluate(TAB_STOPS_JS)
        shown = int(diagram.get_attribute("data-end")) - int(diagram.get_attribute("data-start"))
        assert len(stops) == shown + 1
        assert all(kind == "request" for _, kind in stops)
        assert len({call for call, _ in stops}) == len(stops)
        first = diagram.locator("a.arrow.request").first
        first.focus()
        for call, _ in stops[1:4]:
            page.keyboard.press("Tab")
            focused = page.evaluate(
                "[document.activeElement.dataset.call, document.activeElement.dataset.kind]"
            )
            assert focused == [call, "request"]

        # The skip link, before the diagram, moves the focus past it.
        skip = page.get_by_role("link", name="Skip the diagram")
        skip.focus()
        expect(skip).to_be_visible()
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "after-sequence"
        page.keyboard.press("Tab")
        inside = page.evaluate(
            "!!document.activeElement.closest('#sequence svg, #sequence .overview')"
        )
        assert not inside
        assert errors == []
    finally:
        context.close()


def test_a_desktop_gets_the_wide_layout_alone_and_a_resize_to_a_phone_the_compact_one(
    browser, live_server, many_tools_trace
):
    """The page is sent the wide layout; narrowed below 1000 px, its script fetches the
    compact one and shows it in place of the wide one, and widened again the wide one
    is back (both kept, CSS picks): never a page wider than the phone, nor an error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=live_server.url)
    page = context.new_page()
    errors: list[str] = []
    asked: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda r: asked.append(r.url) if "diagram.json" in r.url else None)
    try:
        page.goto(f"/traces/{many_tools_trace.pk}/#sequence")
        wide = page.locator(VISIBLE_DIAGRAM.format(layout="wide"))
        compact = page.locator(VISIBLE_DIAGRAM.format(layout="compact"))
        expect(wide).to_be_visible()
        page.wait_for_load_state("networkidle")
        assert compact.count() == 0 and asked == []  # a desktop fetches no phone layout

        page.set_viewport_size({"width": 390, "height": 844})
        expect(compact).to_be_visible()
        expect(wide).to_be_hidden()
        assert len(asked) == 1 and "layout=compact" in asked[0] and "parts=window" in asked[0]
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
        stops = compact.evaluate(TAB_STOPS_JS)
        shown = int(compact.get_attribute("data-end")) - int(compact.get_attribute("data-start"))
        assert len(stops) == shown + 1  # one tab stop per call in the layout shown

        page.set_viewport_size({"width": 1280, "height": 900})
        expect(wide).to_be_visible()
        expect(compact).to_be_hidden()
        assert len(asked) == 1  # both drawings are there: nothing fetched again
        assert errors == []
    finally:
        context.close()
