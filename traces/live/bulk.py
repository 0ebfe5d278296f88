"""Live traces created whole, many at once: the queued OTLP store's new traces.

An OTLP export names a hundred traces at a time, most of them new. Created one by one
through `append_lines` (a row, a chunk, a session, its rows, its events, a report task,
each trace its own handful of statements) they cost 12 ms each while the exporter
waited (issue 25). Here each new trace's first line is read and rebuilt without the
database (`prepare_live_trace`), then `create_live_traces` stores them all the way an
upload stores its rows (traces.storage.rows: one blob batch, plain SQL inserts): trace
rows, chunks, calls, tool runs and search text in a few `executemany`. Their calls are
viewable then; their reports follow as a live trace's do, built together and stored in
bulk (`report_live_traces`: the report, the findings per rule, the usage rows).

The result is the same live trace an append would have made: state live, its capture
key, one chunk holding its first line (first_line 1), so the next export's spans are
appended by `append_lines`, whose session replays that chunk first.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import transaction
from django.utils import timezone

from traces import models
from traces.conf import limits
from traces.core.analysis.ingest import TraceSession, choose_format
from traces.core.analysis.pricing import PriceTable
from traces.core.gcpause import without_cycle_collection
from traces.core.model import Trace as CoreTrace
from traces.core.outputs.report import build_report
from traces.core.outputs.runstats import rule_counts
from traces.core.reading import archive
from traces.core.reading.limits import InputRejected
from traces.core.reading.redact import redact
from traces.live.events import (
    account_events,
    finding_events,
    live_counts,
    save_events,
    state_payload,
)
from traces.live.reports import empty_report
from traces.live.sessions import parse_lines, terminated
from traces.storage import originals
from traces.storage.row_writer import (
    PreparedRows,
    insert_instances,
    prepare_new_instances,
    prepare_rows,
    write_instances,
    write_rows,
)
from traces.storage.rows import BlobBatch, call_values, store_line_errors, tool_run_values
from traces.storage.search_index import COLUMNS as SEARCH_COLUMNS
from traces.storage.search_index import search_rows
from traces.storage.usage import store_new_usage_rows


@dataclass(frozen=True)
class PreparedLive:
    """A new live trace's first line, read and rebuilt: what it stores."""

    key: str
    name: str
    format: str
    detection_reason: str
    data: bytes
    """The line as stored (newline-terminated, redacted when the project asks for it)."""
    compressed: bytes
    redacted: dict[str, int]
    core: CoreTrace
    held: list[dict[str, Any]]


@without_cycle_collection  # a trace's rows are many acyclic objects
def prepare_live_trace(
    *, key: str, name: str, line: bytes, format_name: str, redact_credentials: bool
) -> PreparedLive:
    """Read one line into a new live trace's rows, as an append would, without the
    database. Raises InputRejected past the size limit or for an unknown format."""
    data = terminated(line)
    fields: dict[str, int] = {}
    if redact_credentials:
        cleaned = redact(data)
        data, fields = cleaned.data, cleaned.fields
    max_bytes = limits().max_file_bytes
    if len(data) > max_bytes:
        raise InputRejected(f"The live trace would pass the {max_bytes:,}-byte limit.")
    choice = choose_format([], format_name)
    session = TraceSession(choice)
    session.feed(parse_lines([data], first_line=1))
    return PreparedLive(
        key=key,
        name=name,
        format=choice.name,
        detection_reason=choice.reason,
        data=data,
        compressed=archive.compress(data),
        redacted=fields,
        core=session.snapshot(1),
        held=session.held(),
    )


@dataclass(frozen=True, eq=False)
class StagedLive:
    """A prepared trace with its id and its chunk's object already in storage (written
    before the transaction: file or bucket writes hold no database lock)."""

    item: PreparedLive
    chunk: models.SourceChunk


def stage_live_traces(prepared: list[PreparedLive]) -> list[StagedLive]:
    """Each trace's id and chunk object (its row unsaved); `discard_staged` removes the
    objects of those not created after all."""
    staged = []
    try:
        for item in prepared:
            trace_id = uuid.uuid4()
            chunk = originals.chunk_row(
                trace_id,
                0,  # the lines stored before it, as a live append numbers its chunks
                item.compressed,
                raw_bytes=len(item.data),
                first_line=1,
                line_count=1,
            )
            staged.append(StagedLive(item, chunk))
    except BaseException:
        discard_staged(staged)
        raise
    return staged


def discard_staged(staged: list[StagedLive]) -> None:
    originals.discard(entry.chunk.key for entry in staged)


@dataclass(frozen=True, eq=False)
class LiveRows:
    """Staged live traces' rows, every value ready for the driver: their Trace rows and
    chunks, the calls' and tool runs' blobs (packed) and rows, the search text. Built
    before the storing transaction (`prepare_live_rows`); `insert_live_rows` then runs
    only the INSERTs in it, so the write lock (all of SQLite's) is held for them alone:
    the receiver's job row, and the pages, wait less for the store."""

    keys: list[str]
    traces: list[models.Trace]
    trace_rows: PreparedRows
    chunks: list[models.SourceChunk]
    blobs: BlobBatch
    calls: PreparedRows | None
    runs: PreparedRows | None
    search: PreparedRows
    line_errors: list[tuple[models.Trace, list[Any]]]


def create_live_traces(staged: list[StagedLive], project: models.Project) -> list[models.Trace]:
    """Store the staged live traces in the caller's transaction, their rows written in
    bulk; their reports follow (`report_live_traces`), as a live append's do. The caller
    discards the staged objects if its transaction fails."""
    if not staged:
        return []
    return insert_live_rows(prepare_live_rows(staged, project))


def prepare_live_rows(staged: list[StagedLive], project: models.Project) -> LiveRows:
    """What `create_live_traces` writes, built without writing (no transaction needed):
    the Trace instances, and every row's values as `insert_rows` would convert them."""
    now = timezone.now()
    traces = [
        models.Trace(
            id=entry.chunk.trace_id,
            project=project,
            name=entry.item.name[:300],
            format=entry.item.format,
            detection_reason=entry.item.detection_reason[:500],
            state=models.Trace.State.LIVE,
            live_activity_at=now,
            report={**orjson.loads(empty_report(entry.item.format)), "held": entry.item.held},
            redacted=entry.item.redacted,
            capture_key=entry.item.key[:200],
            source_bytes=len(entry.item.data),
            **live_counts(entry.item.core, 1),
        )
        for entry in staged
    ]
    prepared = [entry.item for entry in staged]
    batch = BlobBatch()
    call_rows: list[list[Any]] = []
    run_rows: list[list[Any]] = []
    call_columns: list[str] = []
    run_columns: list[str] = []
    for trace, item in zip(traces, prepared, strict=True):
        for call in item.core.calls:
            values = call_values(call, batch)
            call_columns = call_columns or ["trace_id", *values]
            call_rows.append([trace.pk, *values.values()])
        for position, run in enumerate(item.core.tool_runs, start=1):
            values = tool_run_values(position, run, batch)
            run_columns = run_columns or ["trace_id", *values]
            run_rows.append([trace.pk, *values.values()])
    entries = search_rows(
        (trace.pk, call)
        for trace, item in zip(traces, prepared, strict=True)
        for call in item.core.calls
    )
    return LiveRows(
        keys=[item.key for item in prepared],
        traces=traces,
        trace_rows=prepare_new_instances(models.Trace, traces),
        chunks=[entry.chunk for entry in staged],
        blobs=batch,
        calls=prepare_rows(models.Call, call_columns, call_rows) if call_rows else None,
        runs=prepare_rows(models.ToolRun, run_columns, run_rows) if run_rows else None,
        search=prepare_rows(
            models.SearchEntry,
            SEARCH_COLUMNS,
            entries,
            # Many rows a statement: SQLite's FTS5 trigger index writes a segment per
            # statement (traces.storage.search_index).
            rows_per_statement=500,
        ),
        line_errors=[
            (trace, list(item.core.line_errors))
            for trace, item in zip(traces, prepared, strict=True)
            if item.core.line_errors
        ],
    )


def insert_live_rows(rows: LiveRows) -> list[models.Trace]:
    """Write `prepare_live_rows`' rows in the caller's transaction: the new traces."""
    write_instances(rows.trace_rows, rows.traces)
    models.SourceChunk.objects.bulk_create(rows.chunks)
    rows.blobs.save()
    if rows.calls is not None:
        write_rows(rows.calls)
    if rows.runs is not None:
        write_rows(rows.runs)
    write_rows(rows.search)
    for trace, errors in rows.line_errors:
        store_line_errors(trace, errors)
    return rows.traces


@without_cycle_collection
def report_live_traces(created: list[tuple[models.Trace, PreparedLive]], prices: PriceTable) -> int:
    """Build the new traces' reports (no database), then store those of the traces no
    later append has reached (their report would be older than their lines: the append's
    own refresh reports them), with their findings per rule and usage rows in bulk, and
    the events a refresh would tell their viewers. The count stored."""
    reports = {}
    for trace, item in created:
        report = build_report(item.core, prices=prices)
        report["held"] = item.held  # as a live report refresh stores it
        reports[trace.pk] = (trace, report)
    with transaction.atomic():
        untouched = list(
            models.Trace.objects.select_for_update()
            .filter(
                pk__in=list(reports),
                state=models.Trace.State.LIVE,
                report_lines=0,
                lines_total=1,
            )
            .values_list("pk", flat=True)
        )
        reported = [reports[pk] for pk in untouched]
        for trace, report in reported:
            # What a live report refresh tells viewers (one may have opened the page).
            events = account_events(trace.report, report) + finding_events(trace.report, report)
            trace.report = report
            trace.report_lines = 1
            trace.flags_count = len(report["findings"])
            events.append(("state", state_payload(trace)))
            save_events(trace, events)
            models.Trace.objects.filter(pk=trace.pk).update(
                report=report,
                report_lines=1,
                flags_count=trace.flags_count,
                events_seq=trace.events_seq,
            )
        insert_instances(
            models.TraceRule,
            [row for trace, report in reported for row in _rule_rows(trace, report)],
        )
        store_new_usage_rows(reported)
    return len(reported)


def _rule_rows(trace: models.Trace, report: dict[str, Any]) -> list[models.TraceRule]:
    return [
        models.TraceRule(trace=trace, rule=rule[:60], severity=severity[:10], count=count)
        for (rule, severity), count in rule_counts(report.get("findings") or []).items()
    ]
