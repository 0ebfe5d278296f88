"""A live trace's full report (accounting and lint rules), rebuilt from its session and stored.

Appends store calls and tool runs at once; the report, linear in the trace, follows
later in a queue task (traces.live.worker). It is built on an immutable snapshot without
any lock and stored only if it covers more lines than the stored report.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson
from django.db import transaction
from django.db.models import F

from traces import models
from traces.conf import price_table
from traces.core.outputs.report import build_report
from traces.core.outputs.runstats import rule_counts
from traces.live import sessions
from traces.live.events import (
    account_events,
    empty_trace,
    finding_events,
    save_events,
    state_payload,
)
from traces.live.sessions import locked_trace
from traces.services.prices import price_table_for
from traces.storage.rows import store_rule_counts
from traces.storage.usage import store_usage_rows
from traces.stores import store


@lru_cache(maxsize=64)
def empty_report(format_id: str) -> bytes:
    """The report of a trace with no line yet (the same for every new trace of a format;
    the capture receivers create many)."""
    return orjson.dumps(build_report(empty_trace(format_id), prices=price_table()))


def needs_report(trace_id: Any) -> bool:
    """Whether a live trace has lines its stored report does not cover."""
    return (
        models.Trace.objects.filter(
            pk=trace_id, state=models.Trace.State.LIVE, report_lines__lt=F("lines_total")
        )
        .exclude(format="")
        .exists()
    )


def refresh_report(trace_id: Any) -> bool:
    """Rebuild a live trace's report and store it; push the findings it adds or resolves."""
    result = report_of(trace_id)  # None too when the stored report covers every line
    if result is None:
        return False
    covered, report = result
    with transaction.atomic():
        trace = locked_trace(trace_id)
        stale = trace.report_lines >= covered or covered > trace.lines_total
        if trace.state != models.Trace.State.LIVE or stale:
            return False
        previous, was_empty = trace.report, trace.report_lines == 0
        events = account_events(previous, report) + finding_events(previous, report)
        trace.report = report
        trace.report_lines = covered
        trace.flags_count = len(report["findings"])
        events.append(("state", state_payload(trace)))
        save_events(trace, events)
        trace.save(update_fields=["report", "report_lines", "flags_count", "events_seq"])
        # The rule rows follow every stored report but a new trace's empty one (it has
        # none): unchanged counts need no rewrite.
        if was_empty or not _same_rule_counts(previous, report):
            store_rule_counts(trace, report)
        store_usage_rows(trace, report)
    return True


def _same_rule_counts(previous: dict[str, Any], report: dict[str, Any]) -> bool:
    return rule_counts(previous.get("findings") or []) == rule_counts(report["findings"])


def report_of(trace_id: Any) -> tuple[int, dict[str, Any]] | None:
    """(lines covered, report) of a live trace, from this process's session of it; None
    when the stored report covers every line already (or the trace is not live)."""
    try:
        trace = models.Trace.objects.defer("report").get(pk=trace_id)
    except models.Trace.DoesNotExist:
        return None
    if trace.state != models.Trace.State.LIVE or not trace.format:
        return None
    if trace.report_lines >= trace.lines_total:
        return None
    made = store(sessions.Snapshots).covering(trace_id, trace.lines_total)
    if made is not None:  # the last append's, in this process: nothing to replay
        covered = trace.lines_total
        snapshot, held = made
    else:
        entry = store(sessions.ReportSessions).entry(trace_id)
        with entry.lock:
            session = entry.synced(trace, through=trace.lines_total, from_scratch=False)
            covered = entry.lines_fed
            snapshot = session.snapshot(covered)
            held = session.held()
    report = build_report(snapshot, prices=price_table_for(trace.project_id))
    report["held"] = held
    return covered, report
