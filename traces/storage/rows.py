"""A trace's rows, written from the core's objects: calls, tool runs, line errors, the
findings-per-rule rows and the Trace row's summary columns.

It exists so a whole ingest (`traces.services.ingest`) and a live trace's batches (`traces.live`)
write rows the same way: blobs deduplicated by digest in one `BlobBatch`, rows inserted
with plain SQL (`traces.storage.row_writer`), since the ORM's per-object work was most of a long
trace's ingest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, connection

from traces import models
from traces.core.analysis.inferred_errors import LOOK_AT_CHARS
from traces.core.model import Call, ToolRun
from traces.core.model import LineError as CoreLineError
from traces.core.model import Trace as CoreTrace
from traces.core.outputs.runstats import rule_counts, summary_columns
from traces.core.outputs.summary import outcome_of
from traces.core.reading import blobs
from traces.core.stored_message import message_json
from traces.storage.row_writer import insert_rows
from traces.storage.search_index import index_calls

PREVIEW_KEPT_CHARS = LOOK_AT_CHARS
"""What a tool run's row keeps of its result: all that its readers use (the inferred
error reads this much, the pages show 300 characters at most). The whole result stays
in the original (and, in most formats, in the next call's message blobs): the rest of
it here was a copy no reader used (issue 25: tool runs took 0.49x the original of a
20,000-call session, bench/stored_size.py)."""


@dataclass(frozen=True, slots=True)
class _PendingBlob:
    digest: str
    size: int
    data: bytes


class BlobBatch:
    """Collects unique blobs of one ingest (or one live batch) so each digest is written once."""

    def __init__(self, saved: set[str] | None = None) -> None:
        self.pending: dict[str, _PendingBlob] = {}
        self.saved = saved if saved is not None else set()
        """Digests an earlier batch of this transaction saved (and locked): not again."""

    def put(self, value: Any) -> str:
        if value is None:
            return ""
        digest, raw = blobs.digested(value)
        if digest not in self.pending and digest not in self.saved:  # compressed once
            stored = blobs.pack(raw)
            self.pending[digest] = _PendingBlob(digest, len(stored), stored)
        return digest

    def save(self) -> None:
        """Insert the new blobs in one executemany; digests already stored are skipped.

        Plain SQL (an upsert SQLite and PostgreSQL share) because the ORM's per-object
        overhead dominated ingest time on long logs. Every blob this transaction uses stays
        locked until it commits, so deleting a trace cannot collect a blob this ingest is
        about to use (traces.services.deletion locks them FOR UPDATE before it looks again).
        """
        table = connection.ops.quote_name(models.Blob._meta.db_table)
        rows = sorted((b.digest, b.size, b.data) for b in self.pending.values())
        self.saved.update(self.pending)
        self.pending = {}  # written: the bytes need not stay in memory
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                _save_shared(cursor, table, rows)
                return
            # SQLite: one writer at a time; the no-op DO UPDATE (never true) is the lock.
            for start in range(0, len(rows), 2000):
                cursor.executemany(
                    f"INSERT INTO {table} (digest, size, data) VALUES (%s, %s, %s) "
                    "ON CONFLICT (digest) DO UPDATE SET size = excluded.size WHERE 1 = 0",
                    rows[start : start + 2000],
                )


def _save_shared(cursor: Any, table: str, rows: list[tuple[str, int, bytes]]) -> None:
    """PostgreSQL: insert the missing blobs, then take a KEY SHARE lock on every one used.

    Concurrent ingests and live appends share blobs (a system prompt, a tool list): the
    upsert's exclusive tuple lock made each wait for the others' commits, and deadlock
    across their several saves (bench/load.py: 614 deadlocks, live p95 60 s). KEY SHARE
    locks do not conflict with each other, only with the deletion's FOR UPDATE. A blob a
    deletion removed between the insert and the lock is inserted again.
    """
    for _attempt in range(5):
        for start in range(0, len(rows), 2000):
            cursor.executemany(
                f"INSERT INTO {table} (digest, size, data) VALUES (%s, %s, %s) "
                "ON CONFLICT (digest) DO NOTHING",
                rows[start : start + 2000],
            )
        found: set[str] = set()
        for start in range(0, len(rows), 2000):
            part = [digest for digest, _, _ in rows[start : start + 2000]]
            cursor.execute(
                f"SELECT digest FROM {table} WHERE digest = ANY(%s) FOR KEY SHARE", [part]
            )
            found.update(digest for (digest,) in cursor.fetchall())
        rows = [row for row in rows if row[0] not in found]
        if not rows:
            return
    raise DatabaseError("blobs kept disappearing under concurrent deletions")


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
        **session_fields(core),
    }


SESSION_FIELDS = (("agent", "agent", 100), ("project", "working_dir", 500),
                  ("session_id", "session_id", 200))  # fmt: skip
"""(`extra.agent_session` key, the Trace column it fills, the column's length)."""


def session_fields(core: CoreTrace) -> dict[str, str]:
    """Agent, working directory and session id from the first call that names them
    (`extra.agent_session`, set by the readers of agents' own stores). Only what is
    known: a value the watcher set from the store is not blanked by a reader that names
    none."""
    for call in core.calls:
        session = call.extra.get("agent_session")
        if isinstance(session, dict):
            return {
                column: str(session[key])[:length]
                for key, column, length in SESSION_FIELDS
                if isinstance(session.get(key), str) and session[key]
            }
    return {}


def store_rule_counts(trace: models.Trace, report: dict[str, Any]) -> None:
    """Replace the trace's findings-per-rule rows (the list's rule filter reads them)."""
    trace.rule_counts.all().delete()
    models.TraceRule.objects.bulk_create(
        models.TraceRule(trace=trace, rule=rule[:60], severity=severity[:10], count=count)
        for (rule, severity), count in rule_counts(report.get("findings") or []).items()
    )


ROWS_AT_ONCE = 2000
"""Calls (or tool runs) whose rows and blobs a whole-trace store holds at once."""


def store_trace_rows(trace: models.Trace, core: CoreTrace) -> None:
    """A whole trace's calls, tool runs and line errors, written with plain SQL inserts
    (`traces.storage.row_writer`): the ORM's per-object work was most of a long trace's ingest.

    Written `ROWS_AT_ONCE` calls (then tool runs) at a time, each part's new blobs first:
    holding every row and every blob of a 20,000-call trace at once was the peak of its
    ingest's memory. The rows, their order and the blobs stored are the same."""
    saved: set[str] = set()
    calls = core.calls
    for start in range(0, len(calls), ROWS_AT_ONCE):
        batch = BlobBatch(saved)
        call_rows = [call_values(call, batch) for call in calls[start : start + ROWS_AT_ONCE]]
        batch.save()
        _insert_values(models.Call, trace, call_rows)
    runs = list(enumerate(core.tool_runs, start=1))
    for start in range(0, len(runs), ROWS_AT_ONCE):
        batch = BlobBatch(saved)
        run_rows = [
            tool_run_values(position, run, batch)
            for position, run in runs[start : start + ROWS_AT_ONCE]
        ]
        batch.save()
        _insert_values(models.ToolRun, trace, run_rows)
    index_calls(trace, core.calls)
    store_line_errors(trace, core.line_errors)


def _insert_values(model: type, trace: models.Trace, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    columns = ["trace_id", *rows[0]]
    insert_rows(model, columns, ([trace.pk, *row.values()] for row in rows))


def store_calls(trace: models.Trace, calls: Sequence[Call]) -> list[dict[str, Any]]:
    """Insert new calls (and their blobs); a live trace adds them a batch at a time.

    Written with plain SQL (`traces.storage.row_writer`); returns each row's column values (all
    but the trace)."""
    batch = BlobBatch()
    values = [call_values(call, batch) for call in calls]
    batch.save()
    _insert_values(models.Call, trace, values)
    index_calls(trace, calls)
    return values


def store_tool_runs(
    trace: models.Trace, runs: Iterable[tuple[int, ToolRun]], *, replace: bool = True
) -> None:
    """Insert or replace tool runs by position (1-based): a live trace's runs change state
    (pending -> paired) as later lines arrive. `replace=False`: every position is new
    (none stored yet), so there is nothing to delete first."""
    batch = BlobBatch()
    values = [tool_run_values(position, run, batch) for position, run in runs]
    batch.save()
    if replace:
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
        "result_preview": run.result_text[:PREVIEW_KEPT_CHARS],
    }
