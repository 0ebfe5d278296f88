"""Writes: turn bytes into a stored trace. Views, the API and commands all come here."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from traces import models
from traces.conf import limits, price_table
from traces.core import archive, blobs
from traces.core.gcpause import without_cycle_collection
from traces.core.ingest import analyze_bytes, analyze_files
from traces.core.limits import InputRejected
from traces.core.model import Call, ToolRun
from traces.core.model import LineError as CoreLineError
from traces.core.model import Trace as CoreTrace
from traces.core.report import build_report
from traces.core.summary import outcome_of

__all__ = [
    "BlobBatch",
    "IngestResult",
    "InputRejected",
    "store_calls",
    "store_line_errors",
    "store_tool_runs",
    "summary_fields",
    "trace_ingest",
]


@dataclass(frozen=True)
class IngestResult:
    trace: models.Trace
    core: CoreTrace


@dataclass(frozen=True, slots=True)
class _PendingBlob:
    digest: str
    size: int
    data: bytes


class BlobBatch:
    """Collects unique blobs of one ingest (or one live batch) so each digest is written once."""

    def __init__(self) -> None:
        self.pending: dict[str, _PendingBlob] = {}

    def put(self, value: Any) -> str:
        if value is None:
            return ""
        digest, stored = blobs.encode(value)
        if digest not in self.pending:
            self.pending[digest] = _PendingBlob(digest, len(stored), stored)
        return digest

    def save(self) -> None:
        """Insert the new blobs in one executemany; digests already stored are skipped.

        Plain SQL (ON CONFLICT DO NOTHING, which SQLite and PostgreSQL share) because
        the ORM's per-object overhead dominated ingest time on long logs.
        """
        table = connection.ops.quote_name(models.Blob._meta.db_table)
        rows = [(b.digest, b.size, b.data) for b in self.pending.values()]
        with connection.cursor() as cursor:
            for start in range(0, len(rows), 2000):
                cursor.executemany(
                    f"INSERT INTO {table} (digest, size, data) VALUES (%s, %s, %s) "
                    "ON CONFLICT (digest) DO NOTHING",
                    rows[start : start + 2000],
                )


@without_cycle_collection  # a trace's rows are many acyclic objects
def trace_ingest(
    *, data: bytes, name: str, filename: str = "", format_name: str | None = None
) -> IngestResult:
    """Analyse `data` with the core and store everything; raises InputRejected for non-traces."""
    # Compressing and hashing the original release the GIL: they run beside the parse.
    with ThreadPoolExecutor(max_workers=1) as pool:
        archived = pool.submit(_archive, data)
        core = analyze_bytes(data, filename=filename, format_name=format_name, limits=limits())
        report = build_report(core, prices=price_table())
        compressed, sha256 = archived.result()
    with transaction.atomic():
        trace = _create_trace(
            core,
            report,
            name=name or filename or "trace",
            source_filename=filename,
            source_bytes=len(data),
            source_sha256=sha256,
        )
        models.SourceChunk.objects.create(
            trace=trace,
            seq=0,
            raw_bytes=len(data),
            data=compressed,
            line_count=core.lines_total,
        )
        _store_rows(trace, core)
    return IngestResult(trace, core)


@without_cycle_collection  # a trace's rows are many acyclic objects
def trace_ingest_files(
    *, files: list[tuple[str, bytes]], name: str, format_name: str | None = None
) -> IngestResult:
    """Several files read as one trace (a Claude Code session and its subagents' files).

    Each file is kept whole, as its own chunk with its name, and downloads as received.
    """
    if len(files) == 1:
        filename, data = files[0]
        return trace_ingest(data=data, name=name, filename=filename, format_name=format_name)
    core = analyze_files(files, format_name=format_name, limits=limits())
    report = build_report(core, prices=price_table())
    label = f"{files[0][0]} (+{len(files) - 1} file{'s' if len(files) > 2 else ''})"
    compressed = [archive.compress(data) for _, data in files]  # outside the transaction
    with transaction.atomic():
        trace = _create_trace(
            core,
            report,
            name=name or label,
            source_filename=label,
            source_bytes=sum(len(data) for _, data in files),
            source_sha256="",
        )
        models.SourceChunk.objects.bulk_create(
            models.SourceChunk(
                trace=trace, seq=seq, raw_bytes=len(data), data=packed, filename=filename[:300]
            )
            for seq, ((filename, data), packed) in enumerate(zip(files, compressed, strict=True))
        )
        _store_rows(trace, core)
    return IngestResult(trace, core)


def _create_trace(
    core: CoreTrace,
    report: dict[str, Any],
    *,
    name: str,
    source_filename: str,
    source_bytes: int,
    source_sha256: str,
) -> models.Trace:
    return models.Trace.objects.create(
        name=name[:300],
        format=core.format,
        detection_reason=core.detection_reason[:500],
        source_filename=source_filename[:300],
        source_bytes=source_bytes,
        source_sha256=source_sha256,
        report=report,
        **summary_fields(core, report),
    )


@without_cycle_collection  # a trace's rows are many acyclic objects
def trace_reanalyze(*, trace: models.Trace) -> IngestResult:
    """Run the current core again on a stored trace's original bytes and replace its rows
    and report: after an upgrade brings new rules, formats or prices."""
    from traces import selectors  # selectors read; this service writes what they return

    files = selectors.trace_source_files(trace=trace)
    if files:
        core = analyze_files(files, format_name=trace.format, limits=limits())
    else:
        data = selectors.trace_source_bytes(trace=trace)
        core = analyze_bytes(
            data, filename=trace.source_filename, format_name=trace.format, limits=limits()
        )
    report = build_report(core, prices=price_table())
    with transaction.atomic():
        trace.calls.all().delete()
        trace.tool_runs.all().delete()
        trace.line_errors.all().delete()
        for field, value in {**summary_fields(core, report), "report": report}.items():
            setattr(trace, field, value)
        trace.save()
        _store_rows(trace, core)
    return IngestResult(trace, core)


def _archive(data: bytes) -> tuple[bytes, str]:
    return archive.compress(data), hashlib.sha256(data).hexdigest()


def summary_fields(core: CoreTrace, report: dict[str, Any]) -> dict[str, Any]:
    """The Trace row's denormalised counts and totals, from the core trace and its report."""
    totals = report["totals"]
    outcome = outcome_of(core)
    starts = [c.started_at for c in core.calls if c.started_at is not None]
    ends = [c.ended_at for c in core.calls if c.ended_at is not None]
    return {
        "lines_total": core.lines_total,
        "records_ingested": core.records_ingested,
        "calls_count": totals["calls"],
        "failed_calls": totals["failed_calls"],
        "loops_count": totals["loops"],
        "tool_runs_count": totals["tool_runs"],
        "line_errors_count": len(core.line_errors),
        "input_tokens": totals["input_tokens"],
        "output_tokens": totals["output_tokens"],
        "cache_read_tokens": totals["cache_read_tokens"],
        "cache_write_tokens": totals["cache_write_tokens"],
        "started_at": min(starts) if starts else None,
        "ended_at": max(ends) if ends else None,
        "outcome_kind": outcome.kind,
        "outcome_text": outcome.text[:500],
        "flags_count": len(report["findings"]),
    }


def _store_rows(trace: models.Trace, core: CoreTrace) -> None:
    batch = BlobBatch()
    call_rows = [call_row(trace, call, batch) for call in core.calls]
    run_rows = [
        tool_run_row(trace, position, run, batch)
        for position, run in enumerate(core.tool_runs, start=1)
    ]
    batch.save()
    models.Call.objects.bulk_create(call_rows, batch_size=500)
    models.ToolRun.objects.bulk_create(run_rows, batch_size=500)
    store_line_errors(trace, core.line_errors)


def store_calls(trace: models.Trace, calls: Iterable[Call]) -> list[models.Call]:
    """Insert new calls (and their blobs); a live trace adds them a batch at a time."""
    batch = BlobBatch()
    rows = [call_row(trace, call, batch) for call in calls]
    batch.save()
    return models.Call.objects.bulk_create(rows, batch_size=500)


def store_tool_runs(trace: models.Trace, runs: Iterable[tuple[int, ToolRun]]) -> None:
    """Insert or replace tool runs by position (1-based): a live trace's runs change state
    (pending -> paired) as later lines arrive."""
    batch = BlobBatch()
    rows = [tool_run_row(trace, position, run, batch) for position, run in runs]
    batch.save()
    trace.tool_runs.filter(position__in=[row.position for row in rows]).delete()
    models.ToolRun.objects.bulk_create(rows, batch_size=500)


def store_line_errors(trace: models.Trace, errors: Iterable[CoreLineError]) -> None:
    models.LineError.objects.bulk_create(
        [models.LineError(trace=trace, line=e.line, message=e.message[:500]) for e in errors],
        batch_size=500,
    )


def call_row(trace: models.Trace, call: Call, batch: BlobBatch) -> models.Call:
    usage = call.usage
    return models.Call(
        trace=trace,
        index=call.index,
        loop=call.loop,
        line=call.line,
        model=(call.model or "")[:200],
        stop_reason=(call.stop_reason or "")[:60],
        status=call.status,
        error=call.error or "",
        http_status=call.http_status,
        usage_reported=usage is not None,
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        cache_read_tokens=usage.cache_read_tokens if usage else 0,
        cache_write_tokens=usage.cache_write_tokens if usage else 0,
        started_at=call.started_at,
        ended_at=call.ended_at,
        base_call=call.base_call,
        prefix_len=call.prefix_len,
        extends_previous=call.extends_previous,
        history_rewritten=call.history_rewritten,
        request_recorded=call.request_recorded,
        message_count=call.message_count,
        system_digest=batch.put(call.system),
        tools_digest=batch.put(list(call.tools)) if call.tools else "",
        tools_count=len(call.tools),
        appended_digests=[batch.put(m) for m in call.appended_raw],
        response_digest=batch.put(call.response_raw),
        extra_digest=batch.put(dict(call.extra)) if call.extra else "",
        tool_call_ids=list(call.tool_call_ids),
    )


def tool_run_row(
    trace: models.Trace, position: int, run: ToolRun, batch: BlobBatch
) -> models.ToolRun:
    return models.ToolRun(
        trace=trace,
        position=position,
        tool_call_id=run.id[:300],
        name=(run.name or "")[:300],
        loop=run.loop,
        call=run.call,
        result_call=run.result_call,
        status=run.status,
        is_error=run.is_error,
        batch_size=run.batch_size,
        input_digest=batch.put(run.input),
        result_preview=run.result_text,
    )
