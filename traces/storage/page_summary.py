"""A long trace's page summary (`PageSummary` row; traces.core.outputs.page_summary),
written with its report's parts (traces.storage.report_parts) and read by the trace page
instead of the report: at 20,000 calls the page decoded a 34 MB report for figures that
fit in a few kilobytes.

Only a trace with parts has one: its page draws the diagram window from the parts and
everything else from the summary; any other trace's report fits the report cache.
"""

from __future__ import annotations

from typing import Any, cast

from traces import models
from traces.core.analysis.whatif import Basis
from traces.core.outputs.page_summary import SUMMARY_VERSION, PageSummary, page_summary
from traces.core.outputs.render.sequence.index import DiagramIndex


def store_page_summary(
    trace: models.Trace,
    report: dict[str, Any],
    *,
    with_parts: bool,
    index: DiagramIndex | None = None,
    basis: Basis | None = None,
) -> None:
    """Replace the trace's summary with that of `report` (the row's current report, of
    version `trace.report_version`, just built: its default what-if is reused); none when
    the report has no parts. `index`, `basis`: the report's diagram index and what-if
    basis, when built already."""
    models.PageSummary.objects.filter(trace=trace).delete()
    if with_parts:
        summary = page_summary(report, index=index, current=True, basis=basis)
        models.PageSummary.objects.create(
            trace=trace, report_version=int(trace.report_version), data=summary
        )


def stored_page_summary(trace: models.Trace) -> PageSummary | None:
    """The summary of the trace's current report, or None (none stored, another report
    version, another summary version)."""
    data = (
        models.PageSummary.objects.filter(trace_id=trace.pk, report_version=trace.report_version)
        .values_list("data", flat=True)
        .first()
    )
    if not isinstance(data, dict) or data.get("version") != SUMMARY_VERSION:
        return None
    return cast(PageSummary, data)
