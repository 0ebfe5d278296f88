"""Writes: turn bytes into a stored trace. Views, the API and commands all come here."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import connection, transaction

from traces import models, originals, selectors
from traces.access import local_mode
from traces.conf import limits, price_table
from traces.core.analysis.ingest import Progress, analyze_bytes, analyze_files
from traces.core.gcpause import without_cycle_collection
from traces.core.labels import clean_labels
from traces.core.model import Call, ToolRun
from traces.core.model import LineError as CoreLineError
from traces.core.model import Trace as CoreTrace
from traces.core.outputs.report import build_report
from traces.core.outputs.runstats import rule_counts, summary_columns
from traces.core.outputs.summary import outcome_of
from traces.core.reading import archive, blobs
from traces.core.reading.limits import InputRejected
from traces.core.reading.mapping import Mapping, load_mapping
from traces.core.reading.redact import merge_fields, redact
from traces.core.reading.runs import split_runs
from traces.core.stored_message import message_json
from traces.rowwriter import insert_rows

__all__ = [
    "BlobBatch",
    "IngestResult",
    "InputRejected",
    "PreparedIngest",
    "SetIngestResult",
    "ingest_prepare",
    "ingest_store",
    "run_set_ingest",
    "store_calls",
    "store_line_errors",
    "store_rule_counts",
    "store_tool_runs",
    "summary_fields",
    "trace_ingest",
    "trace_set_labels",
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

        Plain SQL (an upsert SQLite and PostgreSQL share) because the ORM's per-object
        overhead dominated ingest time on long logs. The no-op DO UPDATE (never true)
        still locks an existing blob until this transaction commits, so deleting a
        trace cannot collect a blob this ingest is about to use (traces.deletion).
        """
        table = connection.ops.quote_name(models.Blob._meta.db_table)
        # In digest order: two transactions saving shared blobs then lock them in the
        # same order and cannot deadlock (seen under load with concurrent live appends).
        rows = sorted((b.digest, b.size, b.data) for b in self.pending.values())
        with connection.cursor() as cursor:
            for start in range(0, len(rows), 2000):
                cursor.executemany(
                    f"INSERT INTO {table} (digest, size, data) VALUES (%s, %s, %s) "
                    "ON CONFLICT (digest) DO UPDATE SET size = excluded.size WHERE 1 = 0",
                    rows[start : start + 2000],
                )


def redacts(project: models.Project | None) -> bool:
    """Shared mode redacts credentials from originals unless the project keeps them."""
    return not local_mode() and not (project is not None and project.keep_originals)


@dataclass(frozen=True)
class PreparedIngest:
    """Everything an ingest stores, computed without touching the database."""

    core: CoreTrace
    report: dict[str, Any]
    files: list[tuple[str, bytes]]
    compressed: list[bytes]
    sha256: str
    name: str
    source_filename: str
    redacted: dict[str, int]
    """Credentials redacted from the files before anything was read: name -> count."""


@without_cycle_collection  # a trace's rows are many acyclic objects
def ingest_prepare(
    *,
    files: list[tuple[str, bytes]],
    name: str,
    format_name: str | None = None,
    mapping: Mapping | None = None,
    redact_credentials: bool = False,
    progress: Progress | None = None,
) -> PreparedIngest:
    """Parse, rebuild, report and compress: the slow, CPU-bound half of an ingest. It needs
    no database, so the web layer runs it in its ingest pool (see `traces.offload`).

    With `redact_credentials` (shared mode, see `redacts`) the credentials are removed
    first, so nothing derived holds them. Raises InputRejected for non-traces.
    """
    redacted: dict[str, int] = {}
    if redact_credentials:
        cleaned = [(filename, redact(data)) for filename, data in files]
        files = [(filename, result.data) for filename, result in cleaned]
        redacted = merge_fields(*(result.fields for _, result in cleaned))
    if len(files) == 1:
        filename, data = files[0]
        # Compressing and hashing the original release the GIL: they run beside the parse.
        with ThreadPoolExecutor(max_workers=1) as pool:
            archived = pool.submit(_archive, data)
            core = analyze_bytes(
                data,
                filename=filename,
                format_name=format_name,
                limits=limits(),
                mapping=mapping,
                progress=progress,
            )
            report = build_report(core, prices=price_table())
            compressed, sha256 = archived.result()
        return PreparedIngest(
            core,
            report,
            files,
            [compressed],
            sha256,
            name or filename or "trace",
            filename,
            redacted,
        )
    core = analyze_files(files, format_name=format_name, limits=limits(), mapping=mapping)
    report = build_report(core, prices=price_table())
    label = f"{files[0][0]} (+{len(files) - 1} file{'s' if len(files) > 2 else ''})"
    compressed_files = [archive.compress(data) for _, data in files]
    return PreparedIngest(core, report, files, compressed_files, "", name or label, label, redacted)


@without_cycle_collection
def ingest_store(
    prepared: PreparedIngest,
    *,
    labels: Sequence[str] = (),
    run_set: models.RunSet | None = None,
    project: models.Project | None = None,
    created_by: Any = None,
) -> IngestResult:
    """Write a prepared ingest: the original's objects to storage first, then the trace and
    its rows in one transaction (the objects are removed again if that fails)."""
    trace_id = uuid.uuid4()
    chunks = _chunk_rows(trace_id, prepared)
    try:
        trace = _store_trace(prepared, trace_id, chunks, labels, run_set, project, created_by)
    except BaseException:
        originals.discard(chunk.key for chunk in chunks)
        raise
    return IngestResult(trace, prepared.core)


def _chunk_rows(trace_id: uuid.UUID, prepared: PreparedIngest) -> list[models.SourceChunk]:
    """Store each compressed file in storage; their chunk rows, unsaved. Several files are
    one chunk each, with its name; one file is one chunk of all the lines."""
    single = len(prepared.files) == 1
    rows: list[models.SourceChunk] = []
    try:
        for seq, ((filename, data), packed) in enumerate(
            zip(prepared.files, prepared.compressed, strict=True)
        ):
            lines = prepared.core.lines_total if single else 0
            rows.append(
                originals.chunk_row(
                    trace_id,
                    seq,
                    packed,
                    raw_bytes=len(data),
                    line_count=lines,
                    filename="" if single else filename[:300],
                )
            )
    except BaseException:
        originals.discard(row.key for row in rows)
        raise
    return rows


def _store_trace(
    prepared: PreparedIngest,
    trace_id: uuid.UUID,
    chunks: list[models.SourceChunk],
    labels: Sequence[str],
    run_set: models.RunSet | None,
    project: models.Project | None,
    created_by: Any,
) -> models.Trace:
    core, files = prepared.core, prepared.files
    with transaction.atomic():
        trace = _create_trace(
            core,
            prepared.report,
            name=prepared.name,
            source_filename=prepared.source_filename,
            source_bytes=sum(len(data) for _, data in files),
            source_sha256=prepared.sha256,
            labels=labels,
            run_set=run_set,
            project=project,
            created_by=created_by,
            redacted=prepared.redacted,
            trace_id=trace_id,
        )
        models.SourceChunk.objects.bulk_create(chunks)
        _store_rows(trace, core)
    return trace


def trace_ingest(
    *,
    data: bytes,
    name: str,
    filename: str = "",
    format_name: str | None = None,
    labels: Sequence[str] = (),
    run_set: models.RunSet | None = None,
    project: models.Project | None = None,
    created_by: Any = None,
    mapping: Mapping | None = None,
) -> IngestResult:
    """Analyse `data` with the core and store everything; raises InputRejected for non-traces.

    In shared mode the credentials are redacted first, so nothing derived holds them.
    """
    return trace_ingest_files(
        files=[(filename, data)],
        name=name,
        format_name=format_name,
        labels=labels,
        run_set=run_set,
        project=project,
        created_by=created_by,
        mapping=mapping,
    )


def trace_ingest_files(
    *,
    files: list[tuple[str, bytes]],
    name: str,
    format_name: str | None = None,
    labels: Sequence[str] = (),
    run_set: models.RunSet | None = None,
    project: models.Project | None = None,
    created_by: Any = None,
    mapping: Mapping | None = None,
) -> IngestResult:
    """Several files read as one trace (a Claude Code session and its subagents' files).

    Each file is kept whole, as its own chunk with its name, and downloads as received.
    """
    prepared = ingest_prepare(
        files=files,
        name=name,
        format_name=format_name,
        mapping=mapping,
        redact_credentials=redacts(project),
    )
    return ingest_store(
        prepared, labels=labels, run_set=run_set, project=project, created_by=created_by
    )


def _create_trace(
    core: CoreTrace,
    report: dict[str, Any],
    *,
    name: str,
    source_filename: str,
    source_bytes: int,
    source_sha256: str,
    labels: Sequence[str] = (),
    run_set: models.RunSet | None = None,
    project: models.Project | None = None,
    created_by: Any = None,
    redacted: dict[str, int] | None = None,
    trace_id: uuid.UUID | None = None,
) -> models.Trace:
    trace = models.Trace.objects.create(
        id=trace_id or uuid.uuid4(),
        project=project or models.Project.default(),
        created_by=created_by,
        redacted=redacted or {},
        name=name[:300],
        format=core.format,
        detection_reason=core.detection_reason[:500],
        source_filename=source_filename[:300],
        source_bytes=source_bytes,
        source_sha256=source_sha256,
        report=report,
        run_set=run_set,
        **summary_fields(core, report),
    )
    store_rule_counts(trace, report)
    if labels:
        trace_set_labels(trace=trace, labels=labels)
    return trace


@without_cycle_collection  # a trace's rows are many acyclic objects
def trace_reanalyze(*, trace: models.Trace) -> IngestResult:
    """Run the current core again on a stored trace's original bytes and replace its rows
    and report: after an upgrade brings new rules, formats or prices."""
    files = selectors.trace_source_files(trace=trace)
    mapping = stored_mapping(trace.report)
    format_name = None if mapping is not None else trace.format
    if files:
        core = analyze_files(files, format_name=format_name, limits=limits(), mapping=mapping)
    else:
        data = selectors.trace_source_bytes(trace=trace)
        core = analyze_bytes(
            data,
            filename=trace.source_filename,
            format_name=format_name,
            limits=limits(),
            mapping=mapping,
        )
    report = build_report(core, prices=price_table())
    with transaction.atomic():
        trace.calls.all().delete()
        trace.tool_runs.all().delete()
        trace.line_errors.all().delete()
        for field, value in {**summary_fields(core, report), "report": report}.items():
            setattr(trace, field, value)
        trace.save()
        store_rule_counts(trace, report)
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
        **summary_columns(report),
    }


def store_rule_counts(trace: models.Trace, report: dict[str, Any]) -> None:
    """Replace the trace's findings-per-rule rows (the list's rule filter reads them)."""
    trace.rule_counts.all().delete()
    models.TraceRule.objects.bulk_create(
        models.TraceRule(trace=trace, rule=rule[:60], severity=severity[:10], count=count)
        for (rule, severity), count in rule_counts(report.get("findings") or []).items()
    )


def trace_set_labels(*, trace: models.Trace, labels: Iterable[str]) -> list[str]:
    """Make the trace's labels exactly these (cleaned); new label names are created."""
    names = clean_labels(labels)
    for name in names:
        models.Label.objects.get_or_create(name=name)
    trace.labels.set(models.Label.objects.filter(name__in=names))
    return names


@dataclass(frozen=True)
class SetIngestResult:
    run_set: models.RunSet
    added: list[models.Trace]
    duplicates: list[str]
    """Names of runs (or whole files) already in the set, recognised by SHA-256."""
    rejected: list[tuple[str, str]]
    """(name, why) of files or runs that are not traces; the others are stored."""


def run_set_ingest(
    *,
    name: str,
    files: Sequence[tuple[str, bytes]],
    format_name: str | None = None,
    labels: Sequence[str] = (),
    project: models.Project | None = None,
    created_by: Any = None,
) -> SetIngestResult:
    """Store each run of the files (several files, a ZIP, an eval with many samples) as
    its own trace in the set `name` (created if new). A run or file whose bytes are
    already in the set is not stored again."""
    set_name = " ".join(name.split())[:200]
    if not set_name:
        raise InputRejected("Name the run set.")
    project = project or models.Project.default()
    run_set, _ = models.RunSet.objects.get_or_create(project=project, name=set_name)
    duplicates: list[str] = []
    fresh: list[tuple[str, bytes]] = []
    for filename, data in files:
        digest = hashlib.sha256(data).hexdigest()
        if run_set.files.filter(sha256=digest).exists():
            duplicates.append(filename)
        else:
            fresh.append((filename, data))
    runs = []
    rejected: list[tuple[str, str]] = []
    for filename, data in fresh:
        found, unreadable = split_runs([(filename, data)], limits())
        rejected.extend((problem.name, problem.message) for problem in unreadable)
        if found and not (len(found) == 1 and found[0].data is data):
            _keep_set_file(run_set, filename, data, len(found))  # as received, before the split
        runs.extend(found)
    added: list[models.Trace] = []
    seen: set[str] = set()
    for run in runs:
        if run.sha256 in seen or run_set.runs.filter(source_sha256=run.sha256).exists():
            duplicates.append(run.name)
            continue
        seen.add(run.sha256)
        try:
            result = trace_ingest(
                data=run.data,
                name=run.name,
                filename=run.filename,
                format_name=format_name,
                labels=labels,
                run_set=run_set,
                project=project,
                created_by=created_by,
            )
        except InputRejected as exc:
            rejected.append((run.name, str(exc)))
            continue
        added.append(result.trace)
    return SetIngestResult(run_set, added, duplicates, rejected)


def _keep_set_file(run_set: models.RunSet, filename: str, data: bytes, runs: int) -> None:
    sha256 = hashlib.sha256(data).hexdigest()
    if run_set.files.filter(sha256=sha256).exists():
        return
    # Named by the set and the bytes' digest: a racing upload of the same file writes the
    # same object with the same bytes, and the unique constraint keeps one row.
    key = originals.set_file_put(run_set.pk, sha256, data)
    models.RunSetFile.objects.get_or_create(
        run_set=run_set,
        sha256=sha256,
        defaults={"filename": filename[:300], "raw_bytes": len(data), "key": key, "runs": runs},
    )


def _store_rows(trace: models.Trace, core: CoreTrace) -> None:
    """A whole trace's calls, tool runs and line errors, written with plain SQL inserts
    (`traces.rowwriter`): the ORM's per-object work was most of a long trace's ingest."""
    batch = BlobBatch()
    call_rows = [call_values(call, batch) for call in core.calls]
    run_rows = [
        tool_run_values(position, run, batch)
        for position, run in enumerate(core.tool_runs, start=1)
    ]
    batch.save()
    _insert_values(models.Call, trace, call_rows)
    _insert_values(models.ToolRun, trace, run_rows)
    store_line_errors(trace, core.line_errors)


def _insert_values(model: type, trace: models.Trace, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    columns = ["trace_id", *rows[0]]
    insert_rows(model, columns, ([trace.pk, *row.values()] for row in rows))


def store_calls(trace: models.Trace, calls: Iterable[Call]) -> list[models.Call]:
    """Insert new calls (and their blobs); a live trace adds them a batch at a time.

    Written with plain SQL (`traces.rowwriter`); the unsaved rows returned carry the same
    values, for the live page's row HTML (which needs no primary key)."""
    batch = BlobBatch()
    values = [call_values(call, batch) for call in calls]
    batch.save()
    _insert_values(models.Call, trace, values)
    return [models.Call(trace=trace, **row) for row in values]


def store_tool_runs(trace: models.Trace, runs: Iterable[tuple[int, ToolRun]]) -> None:
    """Insert or replace tool runs by position (1-based): a live trace's runs change state
    (pending -> paired) as later lines arrive."""
    batch = BlobBatch()
    values = [tool_run_values(position, run, batch) for position, run in runs]
    batch.save()
    trace.tool_runs.filter(position__in=[row["position"] for row in values]).delete()
    _insert_values(models.ToolRun, trace, values)


def store_line_errors(trace: models.Trace, errors: Iterable[CoreLineError]) -> None:
    models.LineError.objects.bulk_create(
        [models.LineError(trace=trace, line=e.line, message=e.message[:500]) for e in errors],
        batch_size=500,
    )


def call_row(trace: models.Trace, call: Call, batch: BlobBatch) -> models.Call:
    return models.Call(trace=trace, **call_values(call, batch))


def call_values(call: Call, batch: BlobBatch) -> dict[str, Any]:
    """A Call row's column values (all but the trace), its blobs put in `batch`."""
    usage = call.usage
    return {
        "index": call.index,
        "loop": call.loop,
        "line": call.line,
        "model": (call.model or "")[:200],
        "stop_reason": (call.stop_reason or "")[:60],
        "status": call.status,
        "error": call.error or "",
        "http_status": call.http_status,
        "usage_reported": usage is not None,
        "input_tokens": usage.input_tokens if usage else 0,
        "output_tokens": usage.output_tokens if usage else 0,
        "cache_read_tokens": usage.cache_read_tokens if usage else 0,
        "cache_write_tokens": usage.cache_write_tokens if usage else 0,
        "started_at": call.started_at,
        "ended_at": call.ended_at,
        "base_call": call.base_call,
        "prefix_len": call.prefix_len,
        "extends_previous": call.extends_previous,
        "history_rewritten": call.history_rewritten,
        "request_recorded": call.request_recorded,
        "message_count": call.message_count,
        "system_digest": batch.put(call.system),
        "tools_digest": batch.put(list(call.tools)) if call.tools else "",
        "tools_count": len(call.tools),
        "appended_digests": [batch.put(m) for m in call.appended_raw],
        "response_digest": batch.put(call.response_raw),
        "appended_message_digests": [batch.put(message_json(m)) for m in call.appended],
        "response_message_digest": (
            batch.put(message_json(call.response)) if call.response else ""
        ),
        "extra_digest": batch.put(dict(call.extra)) if call.extra else "",
        "tool_call_ids": list(call.tool_call_ids),
    }


def tool_run_row(
    trace: models.Trace, position: int, run: ToolRun, batch: BlobBatch
) -> models.ToolRun:
    return models.ToolRun(trace=trace, **tool_run_values(position, run, batch))


def tool_run_values(position: int, run: ToolRun, batch: BlobBatch) -> dict[str, Any]:
    """A ToolRun row's column values (all but the trace), its input put in `batch`."""
    return {
        "position": position,
        "tool_call_id": run.id[:300],
        "name": (run.name or "")[:300],
        "loop": run.loop,
        "call": run.call,
        "result_call": run.result_call,
        "status": run.status,
        "is_error": run.is_error,
        "batch_size": run.batch_size,
        "input_digest": batch.put(run.input),
        "result_preview": run.result_text,
    }


def stored_mapping(report: dict | None) -> Mapping | None:
    """The mapping a trace was read with, kept in its report (no model field needed)."""
    kept = (report or {}).get("mapping")
    if not isinstance(kept, dict) or not isinstance(kept.get("spec"), dict):
        return None
    return load_mapping(orjson.dumps(kept["spec"]), str(kept.get("name") or "mapping"))


def mapping_from_upload(upload: Any = None, text: str | None = None) -> Mapping | None:
    """A mapping sent with an upload: a file field, or the mapping's text in a form field."""
    if upload is not None:
        return load_mapping(upload.read(), getattr(upload, "name", "") or "mapping")
    if text:
        return load_mapping(text.encode(), "mapping")
    return None
