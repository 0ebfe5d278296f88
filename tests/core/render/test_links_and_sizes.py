"""Renderers link through a `Links` object, never a hand-built path; `sequence_view` draws
the diagram and the overview from one window; no render module outgrows 500 lines."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.core.render.reports import call, finding, linear_loop, report, run
from traces.core.outputs.render import sequence_view
from traces.core.outputs.render.links import ANCHORS, PrefixLinks
from traces.core.outputs.render.sequence import render_overview, render_sequence

RENDER = Path(__file__).resolve().parents[3] / "traces" / "core" / "outputs" / "render"
MAX_LINES = 500


class NumberedLinks:
    """A Links of our own: addresses no prefix scheme would produce."""

    def trace(self) -> str:
        return "/t"

    def call(self, index: int) -> str:
        return f"/c?n={index}"

    def call_findings(self, index: int) -> str:
        return f"/f?n={index}"


def _hrefs(markup: str) -> list[str]:
    return [e.get("href") for e in ET.fromstring(markup).iter() if e.get("href") is not None]


def test_every_diagram_link_comes_from_the_links_object():
    calls = [call(1), call(2)]
    runs = [run("t1", "read_file", 1, 2)]
    findings = [finding("some-rule", 1)]
    svg = render_sequence(report(calls, runs, findings), links=NumberedLinks())
    hrefs = _hrefs(svg)
    assert hrefs
    assert set(hrefs) <= {"/c?n=1", "/c?n=2", "/f?n=1"}
    assert "/f?n=1" in hrefs


def test_the_exports_anchors_are_unchanged():
    assert ANCHORS.call(3) == "#calls/3/"
    assert ANCHORS.call_findings(3) == "#calls/3/#findings"
    assert PrefixLinks("/traces/x/").call(3) == "/traces/x/calls/3/"


def test_sequence_view_draws_both_pictures_from_one_window():
    loop = linear_loop(30)
    view = sequence_view(loop, links=ANCHORS, start=11, window=10, spacing="time")
    assert view["window"]["start"] == 11 and view["window"]["end"] == 20
    assert view["svg"] == render_sequence(loop, links=ANCHORS, start=11, window=10, spacing="time")
    assert view["overview"] == render_overview(loop, start=11, window=10)


def test_no_render_module_is_over_500_lines():
    sizes = {
        str(path.relative_to(RENDER)): len(path.read_text().splitlines())
        for path in RENDER.rglob("*.py")
    }
    assert "sequence/__init__.py" in sizes
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
