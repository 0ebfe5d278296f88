"""Whether the trace page of a request is built from its trace's page summary and window
parts (traces.pages.page_report) and the diagram window drawn from those parts: a long
trace (its report decoded in this process or not) asked for a view the summary holds
(the first page of findings, the default what-if panel, a long loop whose strip marks it
keeps and whose figures the page fetches). Any other view reads the report;
diagram.json reads the summary more often (`json_summary_page`)."""

from __future__ import annotations

from typing import Any

from traces import models
from traces.pages.diagram_presenter import (
    WindowSource,
    figures_inline,
    parts_window_source,
    window_loop,
)
from traces.pages.page_report import PageReport, summary_report, summary_serves, window_parts_of
from traces.pages.whatif import what_if_params


def summary_page(trace: models.Trace, params: Any) -> PageReport | None:
    """The summary page report for this request, or None: read the whole report."""
    page = summary_report(trace)
    if page is None or not summary_serves(page, params, bool(what_if_params(params))):
        return None
    if not page.report.get("loops"):
        return None
    loop = window_loop(page.report, params)
    if figures_inline(page.report, loop) or page.overview(loop) is None:
        return None
    return page


def json_summary_page(trace: models.Trace, params: Any) -> PageReport | None:
    """The summary page report diagram.json draws from for this request, or None: read
    the whole report. Unlike the page's, for a short loop too: diagram.json sends the
    charts of any loop, and those are kept beside the report (traces.storage.report_views)."""
    page = summary_report(trace)
    if page is None or not summary_serves(page, params, bool(what_if_params(params))):
        return None
    if not page.report.get("loops") or page.overview(window_loop(page.report, params)) is None:
        return None
    return page


def page_window_source(trace: models.Trace, page: PageReport) -> WindowSource:
    """The diagram window drawn from the page's parts (read once for the window and the
    tables below it)."""
    assert page.head is not None

    def read(numbers: list[int]) -> list[Any] | None:
        if not window_parts_of(trace, page, numbers):
            return None
        return [page.parts[number] for number in sorted(set(numbers))]

    return parts_window_source(trace, page.head, read)
