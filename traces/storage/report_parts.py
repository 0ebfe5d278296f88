"""A long trace's report cut into the parts its diagram windows are drawn from
(`ReportPart` rows; traces.core.outputs.render.sequence.window_parts), written with the
report and read by a window move: at 20,000 calls a move reads a head of ~0.2 MB and one
or two parts, where it decoded the whole 34 MB report (too large for the report cache).

Parts carry the report version they were cut from; a reader asks for the trace's version
and falls back to the whole report when any part is missing (a trace stored before the
parts existed, a live trace whose reports change every second, a short trace).
"""

from __future__ import annotations

from typing import Any, cast

from traces import models
from traces.core.analysis.whatif import Basis, basis_from_report
from traces.core.outputs.render.sequence.index import diagram_index
from traces.core.outputs.render.sequence.window_parts import (
    WindowHead,
    WindowPart,
    window_head,
    window_parts,
)
from traces.storage.page_summary import store_page_summary
from traces.storage.report_views import VIEWS_FROM_CALLS, store_report_views

PARTS_FROM_CALLS = VIEWS_FROM_CALLS
"""Reports of more calls are cut into parts (a shorter one fits the report cache, and its
page draws from the cached report), and keep their views (traces.storage.report_views)."""


def store_report_parts(
    trace: models.Trace, report: dict[str, Any], *, basis: Basis | None = None
) -> int:
    """Replace the trace's parts with those of `report` (the row's current report, of
    version `trace.report_version`, just made by `build_report`: every caller stores the
    report it built), and its page summary (the page reads the two together); returns
    how many parts were written; and its stored views (traces.storage.report_views).
    The report's diagram index and what-if basis are built once for all (`basis`: the
    one `report_and_basis` built with the report)."""
    models.ReportPart.objects.filter(trace=trace).delete()
    with_parts = len(report.get("calls") or ()) > PARTS_FROM_CALLS
    index = diagram_index(report) if with_parts else None
    if not (with_parts and "what_if" in report):
        basis = None
    elif basis is None:
        basis = basis_from_report(report)
    store_page_summary(trace, report, with_parts=with_parts, index=index, basis=basis)
    store_report_views(trace, report, long=with_parts, basis=basis)
    if not with_parts:
        return 0
    version = int(trace.report_version)
    head = window_head(report, index)
    rows = [models.ReportPart(trace=trace, number=0, report_version=version, data=head)]
    rows += [
        models.ReportPart(trace=trace, number=number, report_version=version, data=part)
        for number, part in window_parts(report).items()
    ]
    models.ReportPart.objects.bulk_create(rows, batch_size=50)
    return len(rows)


def _parts(trace: models.Trace, numbers: list[int]) -> dict[int, Any]:
    rows = models.ReportPart.objects.filter(
        trace_id=trace.pk, report_version=trace.report_version, number__in=numbers
    )
    return dict(rows.values_list("number", "data"))


def report_head(trace: models.Trace) -> WindowHead | None:
    """The head of the trace's current report, or None when it has no parts."""
    found = _parts(trace, [0]).get(0)
    return cast(WindowHead, found) if found is not None else None


def report_window_parts(trace: models.Trace, numbers: list[int]) -> list[WindowPart] | None:
    """The parts `numbers` of the trace's current report, or None when any is missing
    (such a part holds no call, or the report changed since the head was read)."""
    found = _parts(trace, numbers)
    if len(found) != len(set(numbers)):
        return None
    return [cast(WindowPart, found[number]) for number in sorted(set(numbers))]
