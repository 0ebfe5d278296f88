"""A window drawn from a kept `DiagramIndex` is the window drawn from the report, and
drawing it reads only the window's calls: the report's tool runs and findings are not
walked again, so moving the window of a 20,000-call loop costs what 60 calls cost."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import orjson

from tests.core.long_session import make_session
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.render import sequence_view
from traces.core.outputs.render.links import PrefixLinks
from traces.core.outputs.render.sequence import diagram_index
from traces.core.outputs.render.sequence.overview import current_region
from traces.core.outputs.render.sequence.window import sequence_window
from traces.core.outputs.report import build_report


class Unwalked(list):
    """A report list that may be indexed but not iterated (a walk of the whole list)."""

    def __iter__(self) -> Iterator[Any]:
        raise AssertionError("the whole list was walked")


def _report(calls: int) -> dict[str, Any]:
    return orjson.loads(orjson.dumps(build_report(analyze_bytes(make_session(calls)))))


def test_a_kept_index_draws_every_window_as_the_report_does():
    report = _report(300)
    index = diagram_index(report)
    loop = report["loops"][0]["index"]
    assert report["findings"] and report["tool_runs"]
    for start in (1, 61, 121, 280):
        for spacing in ("step", "time"):
            for all_lanes in (False, True):
                options = {"loop": loop, "start": start, "window": 60, "spacing": spacing}
                fresh = sequence_view(
                    report, links=PrefixLinks("/t/"), all_lanes=all_lanes, compact=True, **options
                )
                kept = sequence_view(
                    report,
                    links=PrefixLinks("/t/"),
                    all_lanes=all_lanes,
                    compact=True,
                    index=index,
                    **options,
                )
                assert kept == fresh


def test_a_window_drawn_from_the_index_walks_no_run_or_finding_of_the_report():
    report = _report(300)
    index = diagram_index(report)
    loop = report["loops"][0]["index"]
    expected = sequence_view(
        report, links=PrefixLinks("/t/"), loop=loop, start=121, compact=True, index=index
    )
    report["tool_runs"] = Unwalked(report["tool_runs"])
    report["findings"] = Unwalked(report["findings"])
    report["calls"] = Unwalked(report["calls"])
    moved = sequence_view(
        report,
        links=PrefixLinks("/t/"),
        loop=loop,
        start=121,
        compact=True,
        overview=False,
        index=index,
    )
    assert moved["svg"] == expected["svg"]
    assert moved["compact_svg"] == expected["compact_svg"]
    assert moved["overview"] is None
    assert 'data-start="121"' in moved["svg"]


def test_the_moved_highlight_is_where_the_strip_draws_it():
    report = _report(300)
    loop = report["loops"][0]["index"]
    view = sequence_view(report, links=PrefixLinks("/t/"), loop=loop, start=121)
    meta = sequence_window(report, loop=loop, start=121)
    x, width = current_region(meta)
    assert view["overview_current"] == (x, width)
    assert x > 0 and width > 2
    current = next(
        e for e in ET.fromstring(view["overview"]).iter() if e.get("class") == "ov-current"
    )
    assert abs(float(current.get("x", "nan")) - x) < 0.01
    assert abs(float(current.get("width", "nan")) - width) < 0.01
    assert (
        view["overview_title"] == f"Overview of the loop: {meta.total} calls; calls 121–180 shown"
    )
