"""A long trace's stored answers (`ReportView` rows; traces.core.outputs.report_views):
its loops' charts and default what-if, which figures.json, diagram.json and what-if.json
send as they are. Those of the default loop are written with the report's parts; any
other (another loop, a trace stored before the views existed) is computed from the
decoded report on its first request and kept, so each is computed once a report.

A view carries the report version it was made from and `VIEWS_VERSION`: another is
never read, but computed again and replaced.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import DatabaseError, transaction

from traces import models
from traces.core.analysis.whatif import Basis
from traces.core.analysis.whatif.source import what_if_source
from traces.core.outputs.postmortem import postmortem_source
from traces.core.outputs.report_views import (
    VIEWS_VERSION,
    chart_loop,
    loop_figures,
    what_if_view,
)
from traces.storage.report_cache import load_report, report_cached

T = TypeVar("T")
log = logging.getLogger(__name__)

VIEWS_FROM_CALLS = 500
"""Traces of more calls keep their views (report_parts cuts the same reports into parts):
a shorter report fits the report cache and its answers cost little to compute."""


def keeps_views(trace: models.Trace) -> bool:
    """Whether the trace's answers are kept (a long trace that is not live: a live
    trace's report changes with every batch, and its answers with it)."""
    return trace.state != models.Trace.State.LIVE and trace.calls_count > VIEWS_FROM_CALLS


def figures_name(loop: int | None) -> str:
    return f"figures {loop}"


def what_if_name(loop: int | None) -> str:
    return f"what-if {loop}"


POSTMORTEM_VIEW = "post-mortem"
"""The post-mortem's input (traces.core.outputs.postmortem `postmortem_source`): the
findings, failed results and the few calls the page shows, not the 34 MB report."""


WHAT_IF_SOURCE_VIEW = "what-if source"
"""What what-if.json recomputes the scenarios from when asked other parameters
(traces.core.analysis.whatif.source): the calls' and results' figures, not the report."""


def what_if_input(trace: models.Trace) -> dict[str, Any]:
    """What the trace's what-if is recomputed from (see `kept_input`)."""
    return kept_input(trace, WHAT_IF_SOURCE_VIEW, what_if_source)


def postmortem_input(trace: models.Trace) -> dict[str, Any]:
    """What the trace's post-mortem is built from (see `kept_input`)."""
    return kept_input(trace, POSTMORTEM_VIEW, postmortem_source)


def kept_input(
    trace: models.Trace, name: str, source: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """A long trace's kept view `name` (`source` of its report, computed and kept on the
    first request if it is not kept yet) when its report was not fetched and this
    process does not hold it decoded; else the report itself, which holds as much."""
    deferred = "report" in trace.get_deferred_fields()
    if deferred and keeps_views(trace) and not report_cached(trace):
        return stored_view(trace, name, lambda: source(_report_of(trace)))
    return _report_of(trace)


def _report_of(trace: models.Trace) -> dict[str, Any]:
    if "report" in trace.get_deferred_fields():
        load_report(trace)
    return trace.report or {}


def stored_view(trace: models.Trace, name: str, compute: Callable[[], T]) -> T:
    """The view `name` of the trace's current report: read, or `compute()`d and kept
    (the value must be JSON and must not be mutated)."""
    found = (
        models.ReportView.objects.filter(
            trace_id=trace.pk, name=name, report_version=trace.report_version
        )
        .values_list("data", flat=True)
        .first()
    )
    if isinstance(found, dict) and found.get("version") == VIEWS_VERSION:
        return found["value"]  # type: ignore[no-any-return]
    value = compute()
    _keep(trace, [(name, value)])
    return value


def _keep(trace: models.Trace, views: list[tuple[str, Any]]) -> None:
    """Write `views` of the trace's current report, replacing those of the same names.
    A view is a cache: when it cannot be written (the trace deleted meanwhile, SQLite's
    one writer busy past its timeout), the request still answers and a later one tries
    again."""
    rows = [
        models.ReportView(
            trace_id=trace.pk,
            name=name,
            report_version=int(trace.report_version),
            data={"version": VIEWS_VERSION, "value": value},
        )
        for name, value in views
    ]
    try:
        with transaction.atomic():
            models.ReportView.objects.bulk_create(
                rows,
                update_conflicts=True,
                unique_fields=["trace", "name"],
                update_fields=["report_version", "data"],
            )
    except DatabaseError:
        log.info("trace %s: views not kept this time", trace.pk, exc_info=True)


def store_report_views(
    trace: models.Trace, report: dict[str, Any], *, long: bool, basis: Basis | None = None
) -> None:
    """Replace the trace's views with the default loop's of `report` (the row's current
    report, of version `trace.report_version`, just built); none for a short report,
    whose answers are computed per request. `basis`: the report's what-if basis, when
    built already."""
    models.ReportView.objects.filter(trace=trace).delete()
    if not long:
        return
    loop = chart_loop(report)
    # Each view written as soon as it is made, then let go: made all at once, they were
    # a 20,000-call ingest's peak of memory (+52 MiB over the report).
    _keep(trace, [(figures_name(loop), loop_figures(report, loop))])
    what_if = what_if_view(report, loop, basis=basis, current=True)
    if what_if is not None:
        _keep(trace, [(what_if_name(loop), what_if)])
        del what_if
        _keep(trace, [(WHAT_IF_SOURCE_VIEW, what_if_source(report))])
    _keep(trace, [(POSTMORTEM_VIEW, postmortem_source(report))])
