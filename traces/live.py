"""Writes for live traces: lines arrive a batch at a time and are stored as they come.

The HTTP API, the ingest websocket and `manage.py tail` all call `append_lines`, so a
live trace takes the same path as an upload, a few lines at a time: the core's
`TraceSession` reads them with the same adapter, the rows are written by the same
functions as `services.trace_ingest`, and the original bytes are kept byte-identical (one
zstd object in storage per accepted batch, a `SourceChunk` row naming it, in line order).

Offsets make appends idempotent: a batch says how many lines the client had sent before
it; lines already stored at those positions are acknowledged, not stored twice, and a
batch that would leave a gap is refused with the offset expected.

Each process keeps a `TraceSession` per live trace (an LRU cache), fed only the new lines.
Appends to one trace are serialised by a lock on its row (`select_for_update`; on SQLite
the IMMEDIATE transaction mode serialises writers); a process whose session is behind the
stored total (another process appended) first replays the chunks it missed, and one
without a session rebuilds it from all chunks.

After each batch, the new calls and changed tool runs are stored and pushed to viewers
at once (`LiveEvent` rows, broadcast on commit). The full report (accounting and lint
rules, linear in the trace) is refreshed right after, off the request path, by one
worker thread per process that coalesces refreshes of a busy trace; the findings it adds
are pushed as events too. Closing (explicitly, or after `LIVE_IDLE_SECONDS` without a
line) finishes the session like an upload: calls still waiting become failed calls and
tool calls without a result become dangling.

There is no background timer for the idle timeout: it is checked when lines arrive for
the trace, when a live trace is created or a viewer connects (a sweep of all live
traces), and by `manage.py close_idle_traces`.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import lru_cache
from multiprocessing.connection import Connection
from typing import Any

import orjson
from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from traces import live_worker, models, originals, services
from traces.broadcast import broadcast
from traces.conf import inspector_settings, limits, price_table
from traces.core.accounting import BUCKETS
from traces.core.ingest import FormatChoice, TraceSession, choose_format
from traces.core.limits import InputRejected
from traces.core.model import Call, LineError, ToolRun
from traces.core.model import Trace as CoreTrace
from traces.core.pricing import call_cost
from traces.core.rebuild import TraceBuilder
from traces.core.records import BOM, Record, parse_line
from traces.core.redact import merge_fields, redact
from traces.core.report import RESULT_PREVIEW_CHARS, build_report
from traces.core.summary import outcome_of

log = logging.getLogger(__name__)

LIVE_DEFAULTS: dict[str, Any] = {
    "LIVE_IDLE_SECONDS": 600,
    "LIVE_REPORT_INTERVAL": 1.0,
    "LIVE_SESSIONS": 32,
    "LIVE_REPORT_PROCESS": True,
    "LIVE_SETTLE_SECONDS": 2.0,
}
"""Read from the INSPECTOR setting like everything in traces.conf; these are the defaults."""

BROADCAST_CHUNK = 100
"""Events per channel-layer message: keeps each message small for Redis."""


def live_setting(name: str) -> Any:
    return inspector_settings().get(name, LIVE_DEFAULTS[name])


class LiveError(Exception):
    """An append or close the live trace cannot take; the API maps each kind to a status."""


class OffsetGap(LiveError):
    """The batch starts beyond the stored lines: the client must resend from `expected`."""

    def __init__(self, expected: int) -> None:
        super().__init__(f"lines are missing: the next line expected is at offset {expected}")
        self.expected = expected


class TraceNotLive(LiveError):
    def __init__(self, state: str) -> None:
        super().__init__(f"the trace is {state}, not live: it takes no more lines")
        self.state = state


@dataclass(frozen=True, slots=True)
class AppendResult:
    total: int
    """Lines stored for the trace after this batch (the client's next offset)."""
    accepted: int
    """Lines of this batch stored now (the rest were already stored)."""


# -- creating, appending, closing ---------------------------------------------------------
def create_live_trace(
    *,
    name: str = "",
    format_name: str | None = None,
    filename: str = "",
    project: models.Project | None = None,
    created_by: Any = None,
) -> models.Trace:
    """A new, empty live trace. Raises InputRejected for an unknown format name."""
    choice = choose_format([], format_name) if format_name else None
    sweep_idle()
    format_id = choice.name if choice else ""
    return models.Trace.objects.create(
        project=project or models.Project.default(),
        created_by=created_by,
        name=name[:300] or filename[:300] or "live trace",
        format=format_id,
        detection_reason=choice.reason if choice else "",
        source_filename=filename[:300],
        state=models.Trace.State.LIVE,
        live_activity_at=timezone.now(),
        report=orjson.loads(_empty_report(format_id)),
    )


@lru_cache(maxsize=64)
def _empty_report(format_id: str) -> bytes:
    """The report of a trace with no line yet (the same for every new trace of a format;
    the capture receivers create many)."""
    return orjson.dumps(build_report(_empty_trace(format_id), prices=price_table()))


def append_lines(
    *, trace_id: Any, offset: int | None, lines: Sequence[bytes], viewed: bool = True
) -> AppendResult:
    """Store the lines the client sent after its first `offset` lines, once each; with
    `offset=None`, after whatever is stored (a capture that is the trace's only writer
    and never resends: the recording proxy, the OTLP receiver).

    `viewed=False` (a trace created a moment ago by the same caller, which no page can
    have open yet) skips rendering the call rows that open pages insert.

    Raises OffsetGap, TraceNotLive, models.Trace.DoesNotExist, or InputRejected when the
    first readable lines are no known format or the trace would exceed the size limit.
    """
    if offset is not None and offset < 0:
        raise OffsetGap(0)
    entry = _sessions.entry(trace_id)
    with entry.lock:
        try:
            with transaction.atomic():
                result = _append_locked(entry, trace_id, offset, lines, viewed)
        except BaseException:
            entry.reset()  # the session may hold lines the database does not
            raise
        if result is None:  # it had been idle too long: closed instead
            entry.reset()
            _sessions.forget(trace_id)
            raise TraceNotLive(models.Trace.State.CLOSED)
        return result


def close_live_trace(*, trace_id: Any) -> models.Trace:
    """Finish a live trace like an upload and mark it closed (idempotent)."""
    entry = _sessions.entry(trace_id)
    with entry.lock:
        try:
            with transaction.atomic():
                trace = _locked_trace(trace_id)
                if trace.state == models.Trace.State.LIVE:
                    _close_locked(entry, trace)
        finally:
            entry.reset()
            _sessions.forget(trace_id)
    return trace


def sweep_idle() -> list[uuid.UUID]:
    """Close every live trace that has had no line for LIVE_IDLE_SECONDS; their ids."""
    cutoff = timezone.now() - timedelta(seconds=live_setting("LIVE_IDLE_SECONDS"))
    idle = list(
        models.Trace.objects.filter(
            state=models.Trace.State.LIVE, live_activity_at__lt=cutoff
        ).values_list("pk", flat=True)
    )
    for trace_id in idle:
        close_live_trace(trace_id=trace_id)
    return idle


def _idle(trace: models.Trace) -> bool:
    cutoff = timezone.now() - timedelta(seconds=live_setting("LIVE_IDLE_SECONDS"))
    return trace.live_activity_at is not None and trace.live_activity_at < cutoff


def _locked_trace(trace_id: Any, *, with_report: bool = True) -> models.Trace:
    """The trace row, locked until the transaction ends (appends skip the big report)."""
    rows = models.Trace.objects.select_for_update()
    return (rows if with_report else rows.defer("report")).get(pk=trace_id)


APPEND_FIELDS = [
    "format",
    "detection_reason",
    "source_bytes",
    "live_activity_at",
    "events_seq",
    "lines_total",
    "records_ingested",
    "calls_count",
    "failed_calls",
    "loops_count",
    "tool_runs_count",
    "line_errors_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "started_at",
    "ended_at",
    "outcome_kind",
    "outcome_text",
    "redacted",
]
"""What an append changes on the trace row: never the report, which can be large."""


def _append_locked(
    entry: _LiveEntry,
    trace_id: Any,
    offset: int | None,
    lines: Sequence[bytes],
    viewed: bool = True,
) -> AppendResult | None:
    """The append, under the row lock; None when the trace was idle too long and was
    closed instead (committed, then reported as not live)."""
    trace = _locked_trace(trace_id, with_report=False)
    if trace.state != models.Trace.State.LIVE:
        raise TraceNotLive(trace.state)
    if _idle(trace):
        _close_locked(entry, trace)
        return None
    total = trace.lines_total
    if offset is None:
        offset = total
    if offset > total:
        raise OffsetGap(total)
    fresh = [_terminated(line) for line in lines[total - offset :]]
    project = models.Project.objects.get(pk=trace.project_id)
    if fresh and services.redacts(project):
        cleaned = [redact(line) for line in fresh]
        fresh = [result.data for result in cleaned]
        trace.redacted = merge_fields(trace.redacted, *(result.fields for result in cleaned))
    trace.live_activity_at = timezone.now()
    if not fresh:
        trace.save(update_fields=["live_activity_at"])
        return AppendResult(total, 0)
    data = b"".join(fresh)
    max_bytes = limits().max_file_bytes
    if trace.source_bytes + len(data) > max_bytes:
        raise InputRejected(f"The live trace would pass the {max_bytes:,}-byte limit.")
    items = list(parse_lines(fresh, first_line=total + 1))
    format_was_known = bool(trace.format)
    if not format_was_known:
        values = [item.value for item in items if isinstance(item, Record)]
        if values:
            choice = choose_format(values)  # InputRejected when no adapter claims them
            trace.format, trace.detection_reason = choice.name, choice.reason[:500]
    originals.chunk_create(
        trace,
        seq=total,  # unique and in order: the lines stored before this chunk
        data=data,
        first_line=total + 1,
        line_count=len(fresh),
    )
    trace.lines_total = total + len(fresh)
    trace.source_bytes += len(data)
    events: list[tuple[str, dict[str, Any]]] = []
    if trace.format:
        session = entry.synced(trace, through=total, from_scratch=not format_was_known)
        before = _Marks.of(session) if format_was_known else _Marks()
        session.feed(items)
        entry.lines_fed = trace.lines_total
        snapshot = session.snapshot(trace.lines_total)
        events = _store_changes(trace, session, before, snapshot, rows_html=viewed)
        held = session.held()
        if held != entry.held:
            entry.held = held
            events.append(("held", held_payload(held)))
    _save_events(trace, events)
    trace.save(update_fields=APPEND_FIELDS)
    transaction.on_commit(lambda: _refresher.request(trace.pk))
    return AppendResult(trace.lines_total, len(fresh))


def _close_locked(entry: _LiveEntry, trace: models.Trace) -> None:
    """Finish the session (pending calls fail, waiting tool calls dangle), store what that
    changed and the final report, and tell viewers the trace is closed."""
    session: TraceSession | None = None
    before = _Marks()
    core = _empty_trace(trace.format)
    if trace.format:
        session = entry.synced(trace, through=trace.lines_total, from_scratch=False)
        before = _Marks.of(session)
        core = session.finish(trace.lines_total)
    report = build_report(core, prices=price_table())
    events = _store_changes(trace, session, before, core)
    events += _finding_events(trace.report, report)
    digest = hashlib.sha256()
    for data in originals.chunks_bytes(originals.trace_chunks(trace)):
        digest.update(data)
    trace.source_sha256 = digest.hexdigest()
    stored_lines = trace.lines_total
    trace.report = report
    trace.report_lines = stored_lines
    for name, value in services.summary_fields(core, report).items():
        setattr(trace, name, value)
    trace.lines_total = stored_lines  # every line sent, blank ones included
    trace.state = models.Trace.State.CLOSED
    events.append(("state", _state_payload(trace)))
    _save_events(trace, events)
    trace.save()
    services.store_rule_counts(trace, report)


# -- reading lines --------------------------------------------------------------------------
def split_body(body: bytes) -> list[bytes]:
    """NDJSON request body -> lines; a last line without its newline is a line too."""
    if not body:
        return []
    lines = body.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def _terminated(line: bytes) -> bytes:
    """Each stored line ends with one newline, so the chunks concatenate into JSONL."""
    return line if line.endswith(b"\n") else line + b"\n"


def parse_lines(lines: Sequence[bytes], first_line: int) -> Iterator[Any]:
    """Records and LineErrors of newline-terminated lines numbered from `first_line`;
    blank lines are counted but yield nothing (as in an upload)."""
    line_limits = limits()
    for number, line in enumerate(lines, start=first_line):
        raw = line.rstrip(b"\n").rstrip(b"\r")
        if raw.startswith(BOM):
            raw = raw[len(BOM) :]
        if not raw.strip():
            continue
        parsed = parse_line(raw, number, line_limits)
        if isinstance(parsed, LineError):
            yield parsed
        else:
            yield Record(number, parsed)


# -- the per-process session cache ----------------------------------------------------------
@dataclass
class _LiveEntry:
    """One live trace's session in this process; `lock` serialises its use here."""

    trace_id: str
    lock: threading.RLock = field(default_factory=threading.RLock)
    session: TraceSession | None = None
    lines_fed: int = 0
    held: list[dict[str, Any]] = field(default_factory=list)
    """The held responses last told to viewers (see `held_payload`)."""

    def reset(self) -> None:
        self.session = None
        self.lines_fed = 0
        self.held = []

    def synced(self, trace: models.Trace, *, through: int, from_scratch: bool) -> TraceSession:
        """The session, fed exactly the first `through` stored lines (replaying chunks)."""
        choice = FormatChoice(trace.format, trace.detection_reason)
        stale = self.session is None or self.session.choice.name != choice.name
        if from_scratch or stale or self.lines_fed > through:
            self.session = TraceSession(choice, trace.source_filename)
            self.lines_fed = 0
        assert self.session is not None
        if self.lines_fed < through:
            missed = trace.chunks.filter(
                first_line__gt=self.lines_fed, first_line__lte=through
            ).order_by("first_line")
            chunks = list(missed.only("key", "first_line", "line_count"))
            for chunk, data in zip(chunks, originals.chunks_bytes(chunks), strict=True):
                if chunk.first_line != self.lines_fed + 1:  # never expected: start over
                    self.reset()
                    return self.synced(trace, through=through, from_scratch=True)
                lines = split_body(data)
                self.session.feed(parse_lines([_terminated(x) for x in lines], chunk.first_line))
                self.lines_fed = chunk.first_line + chunk.line_count - 1
        return self.session


class _SessionCache:
    """An LRU of live entries, at most LIVE_SESSIONS (a cold one is rebuilt from chunks)."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, _LiveEntry] = OrderedDict()
        self._lock = threading.Lock()

    def entry(self, trace_id: Any) -> _LiveEntry:
        key = str(trace_id)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _LiveEntry(key)
            self._entries.move_to_end(key)
            while len(self._entries) > live_setting("LIVE_SESSIONS"):
                self._entries.popitem(last=False)
            return entry

    def forget(self, trace_id: Any) -> None:
        with self._lock:
            self._entries.pop(str(trace_id), None)

    def clear(self) -> None:
        """Drop every session (tests use it to act as a fresh process)."""
        with self._lock:
            self._entries.clear()


_sessions = _SessionCache()


def forget_sessions() -> None:
    _sessions.clear()


# -- what changed, stored and told ----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Marks:
    """How far the stored rows go: calls and line errors are appended, runs replaced."""

    calls: int = 0
    runs: tuple[ToolRun, ...] = ()
    errors: int = 0

    @classmethod
    def of(cls, session: TraceSession) -> _Marks:
        builder = session.builder
        return cls(len(builder.calls), tuple(builder.tool_runs), len(builder.line_errors))


def _store_changes(
    trace: models.Trace,
    session: TraceSession | None,
    before: _Marks,
    core: CoreTrace,
    *,
    rows_html: bool = True,
) -> list[tuple[str, dict[str, Any]]]:
    """Write the calls, tool runs and line errors that are new since `before`; the events
    that tell viewers about them; and the trace's counts (the report follows later)."""
    new_calls = core.calls[before.calls :]
    changed_runs = [
        (position, run)
        for position, run in enumerate(core.tool_runs, start=1)
        if position > len(before.runs)
        or (before.runs[position - 1] is not run and before.runs[position - 1] != run)
    ]
    errors = session.builder.line_errors[before.errors :] if session is not None else []
    rows = services.store_calls(trace, new_calls)
    if changed_runs:
        services.store_tool_runs(trace, changed_runs)
    services.store_line_errors(trace, errors)
    for name, value in _counts(core, trace.lines_total).items():
        setattr(trace, name, value)
    events: list[tuple[str, dict[str, Any]]] = []
    if rows:
        names = _tool_names(changed_runs)
        html = _call_rows_html(trace, rows, new_calls, names) if rows_html else ["" for _ in rows]
        events += [
            ("call", _call_payload(trace, call, names.get(call.index, []), row_html))
            for call, row_html in zip(new_calls, html, strict=True)
        ]
    events += [("tool_run", _run_payload(position, run)) for position, run in changed_runs]
    return events


def _counts(core: CoreTrace, lines_total: int) -> dict[str, Any]:
    """The Trace row's counts and token sums, without the (later) report."""
    reported = [c.usage for c in core.calls if c.usage is not None]
    starts = [c.started_at for c in core.calls if c.started_at is not None]
    ends = [c.ended_at for c in core.calls if c.ended_at is not None]
    outcome = outcome_of(core)
    return {
        "lines_total": lines_total,
        "records_ingested": core.records_ingested,
        "calls_count": len(core.calls),
        "failed_calls": sum(1 for c in core.calls if c.status == "error"),
        "loops_count": len(core.loops),
        "tool_runs_count": len(core.tool_runs),
        "line_errors_count": len(core.line_errors),
        "input_tokens": sum(u.input_tokens for u in reported),
        "output_tokens": sum(u.output_tokens for u in reported),
        "cache_read_tokens": sum(u.cache_read_tokens for u in reported),
        "cache_write_tokens": sum(u.cache_write_tokens for u in reported),
        "started_at": min(starts) if starts else None,
        "ended_at": max(ends) if ends else None,
        "outcome_kind": outcome.kind,
        "outcome_text": outcome.text[:500],
    }


def _save_events(trace: models.Trace, events: list[tuple[str, dict[str, Any]]]) -> None:
    """Number the events after the trace's last, store them, broadcast them on commit."""
    if not events:
        return
    first = trace.events_seq + 1
    rows = [
        models.LiveEvent(trace=trace, seq=seq, type=kind, payload=payload)
        for seq, (kind, payload) in enumerate(events, start=first)
    ]
    models.LiveEvent.objects.bulk_create(rows, batch_size=500)
    trace.events_seq = first + len(rows) - 1
    # Encoded once here, not once per viewer.
    texts = [encode_event(row.seq, row.type, row.payload) for row in rows]
    trace_id = trace.pk

    def send() -> None:
        for start in range(0, len(texts), BROADCAST_CHUNK):
            broadcast(trace_id, first + start, texts[start : start + BROADCAST_CHUNK])

    transaction.on_commit(send)


def event_message(seq: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The JSON a viewer receives: `{"type", "seq", "data"}`."""
    return {"type": kind, "seq": seq, "data": payload}


def encode_event(seq: int, kind: str, payload: dict[str, Any]) -> str:
    return orjson.dumps(event_message(seq, kind, payload)).decode()


def events_after(*, trace_id: Any, after: int, limit: int = 5000) -> list[dict[str, Any]]:
    """Stored events of a trace with seq > after, in order (a viewer's backlog)."""
    rows = models.LiveEvent.objects.filter(trace_id=trace_id, seq__gt=after).order_by("seq")
    return [event_message(r.seq, r.type, r.payload) for r in rows[:limit]]


def encoded_events_after(*, trace_id: Any, after: int, limit: int = 5000) -> list[tuple]:
    """The same as `events_after`, as broadcast: `(seq, JSON text)` pairs."""
    rows = models.LiveEvent.objects.filter(trace_id=trace_id, seq__gt=after).order_by("seq")
    return [(r.seq, encode_event(r.seq, r.type, r.payload)) for r in rows[:limit]]


def _tool_names(changed_runs: list[tuple[int, ToolRun]]) -> dict[int, list[str]]:
    names: dict[int, list[str]] = {}
    for _, run in changed_runs:
        if run.call is not None:
            names.setdefault(run.call, []).append(run.name or "?")
    return names


_ROW = re.compile(r"<tr\b.*?</tr>", re.DOTALL)


def _call_rows_html(
    trace: models.Trace, rows: list[models.Call], calls: Sequence[Call], names: dict[int, list]
) -> list[str]:
    """Each new call's table row, rendered by the trace page's own row template."""
    for row, call in zip(rows, calls, strict=True):
        row.tool_names = names.get(call.index, [])
        row.appended_count = row.message_count - row.prefix_len
        # The report (accounting and its estimates) follows; until then: cost from usage,
        # and "≈ —" for the tokens of a call that reported none.
        row.account = {"cost_usd": _cost(call), "buckets": dict.fromkeys(BUCKETS, "")}
        row.flags = []
    html = render_to_string("traces/_call_rows.html", {"trace": trace, "calls": rows})
    body = html.split("<tbody>", 1)[-1]
    found = _ROW.findall(body)
    return found if len(found) == len(rows) else ["" for _ in rows]


def _cost(call: Call) -> float | None:
    """A call's cost from its own usage (the report adds the estimates for the others)."""
    if call.usage is None:
        return None
    price = price_table().lookup(call.model)
    return None if price is None else round(call_cost(call.usage, price[1]), 6)


def _call_payload(
    trace: models.Trace, call: Call, tool_names: list[str], row_html: str
) -> dict[str, Any]:
    usage = call.usage
    return {
        "index": call.index,
        "loop": call.loop,
        "base_call": call.base_call,
        "line": call.line,
        "model": call.model,
        "status": call.status,
        "stop_reason": call.stop_reason,
        "error": call.error,
        "http_status": call.http_status,
        "usage_reported": usage is not None,
        "input_tokens": (
            usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
            if usage
            else None
        ),
        "cache_read_tokens": usage.cache_read_tokens if usage else None,
        "output_tokens": usage.output_tokens if usage else None,
        "started_at": call.started_at,
        "ended_at": call.ended_at,
        "message_count": call.message_count,
        "tool_call_ids": list(call.tool_call_ids),
        "tool_names": tool_names,
        "cost_usd": _cost(call),
        "url": reverse("traces:call", args=[trace.pk, call.index]),
        "row_html": row_html,
    }


def _run_payload(position: int, run: ToolRun) -> dict[str, Any]:
    return {
        "position": position,
        "id": run.id,
        "name": run.name,
        "loop": run.loop,
        "call": run.call,
        "result_call": run.result_call,
        "status": run.status,
        "is_error": run.is_error,
        "batch_size": run.batch_size,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "duration_s": run.duration_s,
        "result_preview": run.result_text[:RESULT_PREVIEW_CHARS],
    }


def _finding_key(finding: dict[str, Any]) -> tuple:
    return (finding["rule"], finding.get("call"), finding.get("tool_call_id"), finding.get("loop"))


def _finding_events(
    previous: dict[str, Any], report: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """Findings the previous report did not have (by rule, call, tool call and loop), then
    those it had and this one has not, marked `"resolved": true`."""
    known = {_finding_key(f) for f in previous.get("findings", [])}
    current = {_finding_key(f) for f in report.get("findings", [])}
    events: list[tuple[str, dict[str, Any]]] = [
        ("finding", f) for f in report.get("findings", []) if _finding_key(f) not in known
    ]
    events += [
        ("finding", {**f, "resolved": True})
        for f in previous.get("findings", [])
        if _finding_key(f) not in current
    ]
    return events


def held_payload(held: list[dict[str, Any]]) -> dict[str, Any]:
    """The `held` event: the last message of each loop that the adapter still holds,
    shown at once as possibly still growing; a viewer settles it when its loop's next
    line proves it complete, after LIVE_SETTLE_SECONDS without a line, or at close."""
    return {"messages": held, "settle_seconds": float(live_setting("LIVE_SETTLE_SECONDS"))}


def held_messages(trace: models.Trace) -> list[dict[str, Any]]:
    """A live trace's held messages, each saying whether it may still grow: not once a
    later line of its loop completed it, nor once the trace has been quiet a moment."""
    if trace.state != models.Trace.State.LIVE:
        return []
    quiet = trace.live_activity_at is None or (
        timezone.now() - trace.live_activity_at
    ).total_seconds() >= float(live_setting("LIVE_SETTLE_SECONDS"))
    return [
        {**message, "growing": not (message.get("complete") or quiet)}
        for message in (trace.report or {}).get("held", [])
    ]


RUNNING = {
    "kind": "running",
    "text": "Running: the loop is still being recorded; the outcome is decided when the "
    "trace closes.",
    "loop": None,
    "call": None,
}


def _state_payload(trace: models.Trace) -> dict[str, Any]:
    return {
        "state": trace.state,
        "lines": trace.lines_total,
        "calls": trace.calls_count,
        "tool_runs": trace.tool_runs_count,
        "findings": trace.flags_count,
        "outcome": {"kind": trace.outcome_kind, "text": trace.outcome_text},
        "cost_usd": (trace.report.get("totals") or {}).get("cost_usd"),
    }


def _empty_trace(format_name: str) -> CoreTrace:
    return TraceBuilder(format_name).snapshot(0, 0)


# -- the report, refreshed off the request path --------------------------------------------
def refresh_report(trace_id: Any) -> bool:
    """Rebuild a live trace's report and store it; push the findings it adds or resolves.

    The slow part (accounting and rules, linear in the trace) runs in the report worker
    process when it can, else here on an immutable snapshot without any lock; the result
    is stored only if it covers more lines than the stored report.
    """
    pending = models.Trace.objects.filter(
        pk=trace_id, state=models.Trace.State.LIVE, report_lines__lt=F("lines_total")
    ).exclude(format="")
    if not pending.exists():
        return False
    result = _report_process.compute(trace_id)
    if result is None:
        result = report_of(trace_id)
    if result is None:
        return False
    covered, report = result
    with transaction.atomic():
        trace = _locked_trace(trace_id)
        stale = trace.report_lines >= covered or covered > trace.lines_total
        if trace.state != models.Trace.State.LIVE or stale:
            return False
        events = _finding_events(trace.report, report)
        trace.report = report
        trace.report_lines = covered
        trace.flags_count = len(report["findings"])
        events.append(("state", _state_payload(trace)))
        _save_events(trace, events)
        trace.save(update_fields=["report", "report_lines", "flags_count", "events_seq"])
        services.store_rule_counts(trace, report)
    return True


def report_of(trace_id: Any) -> tuple[int, dict[str, Any]] | None:
    """(lines covered, report) of a live trace, from this process's session of it."""
    try:
        trace = models.Trace.objects.defer("report").get(pk=trace_id)
    except models.Trace.DoesNotExist:
        return None
    if trace.state != models.Trace.State.LIVE or not trace.format:
        return None
    entry = _sessions.entry(trace_id)
    with entry.lock:
        session = entry.synced(trace, through=trace.lines_total, from_scratch=False)
        covered = entry.lines_fed
        snapshot = session.snapshot(covered)
        held = session.held()
    report = build_report(snapshot, prices=price_table())
    report["held"] = held
    return covered, report


class _ReportProcess:
    """A child process that builds live reports, so that this process's GIL stays with the
    requests and websockets (the rebuild is pure CPU work, and the machine has more than
    one core). It keeps its own sessions, fed from the stored chunks, and answers
    `trace id -> (lines covered, report)` over a pipe. Off with
    INSPECTOR["LIVE_REPORT_PROCESS"] = False, or when it cannot start or dies: reports
    are then built in the refresher thread.
    """

    TIMEOUT = 300.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: multiprocessing.process.BaseProcess | None = None
        self._pipe: Connection | None = None
        self._broken = False

    def compute(self, trace_id: Any) -> tuple[int, dict[str, Any]] | None:
        if self._broken or not live_setting("LIVE_REPORT_PROCESS"):
            return None
        with self._lock:
            try:
                pipe = self._running()
                pipe.send(str(trace_id))
                if not pipe.poll(self.TIMEOUT):
                    raise TimeoutError("the report worker did not answer")
                answer = pipe.recv()
            except (OSError, EOFError, TimeoutError, ValueError) as exc:
                log.warning("live report worker failed (%s); building reports in-process", exc)
                self.stop()
                return None
        if answer[0] == "error":
            log.error("live report of %s failed in the worker: %s", trace_id, answer[1])
            return None
        return answer[1] if answer[0] == "ok" else None

    def _running(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._pipe is not None:
            return self._pipe
        self.stop()
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(
            target=live_worker.main,
            args=(theirs, os.environ.get("DJANGO_SETTINGS_MODULE", ""), settings.DATABASES),
            name="live-report-worker",
            daemon=True,
        )
        try:
            process.start()
        except OSError:
            self._broken = True
            raise
        theirs.close()
        self._process, self._pipe = process, ours
        return ours

    def stop(self) -> None:
        if self._pipe is not None:
            self._pipe.close()
        if self._process is not None and self._process.is_alive():
            self._process.terminate()
            self._process.join(5)
        self._process = self._pipe = None


_report_process = _ReportProcess()


REPORT_DUTY = 4
"""A busy trace's report is rebuilt at most every REPORT_DUTY x the last rebuild's time,
so that it takes at most a fifth of a core (of the GIL, when built in-process)."""


class _ReportRefresher:
    """One worker thread per process; a trace busy with lines is refreshed at most every
    max(LIVE_REPORT_INTERVAL, REPORT_DUTY x its last refresh time), and always once after
    its last batch."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[str, float] = {}
        self._not_before: dict[str, float] = {}
        self._busy = False
        self._thread: threading.Thread | None = None

    def request(self, trace_id: Any) -> None:
        key = str(trace_id)
        with self._cond:
            if key not in self._due:
                self._due[key] = max(time.monotonic(), self._not_before.get(key, 0.0))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="live-report-refresher", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until no refresh is due or running (tests, benchmarks, shutdown)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._due or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    def _next(self) -> str:
        with self._cond:
            while True:
                now = time.monotonic()
                ready = [key for key, at in self._due.items() if at <= now]
                if ready:
                    key = min(ready, key=self._due.__getitem__)
                    del self._due[key]
                    self._busy = True
                    return key
                wait = min(self._due.values()) - now if self._due else None
                self._cond.wait(wait)

    def _run(self) -> None:
        while True:
            key = self._next()
            started = time.monotonic()
            try:
                refresh_report(key)
            except Exception:
                log.exception("live report refresh failed for trace %s", key)
            finally:
                close_old_connections()
                connection.close()  # the worker must not hold a connection between jobs
                spent = time.monotonic() - started
                with self._cond:
                    gap = max(float(live_setting("LIVE_REPORT_INTERVAL")), REPORT_DUTY * spent)
                    self._not_before[key] = time.monotonic() + gap
                    if key in self._due:
                        self._due[key] = max(self._due[key], self._not_before[key])
                    self._busy = False
                    self._cond.notify_all()


_refresher = _ReportRefresher()


def wait_for_reports(timeout: float = 30.0) -> bool:
    """Block until the reports asked for so far are refreshed (tests and benchmarks)."""
    return _refresher.drain(timeout)


def live_status(*, trace_id: Any) -> dict[str, Any]:
    """Where a client stands: stored lines (its next offset) and the state."""
    trace = models.Trace.objects.only("state", "lines_total").get(pk=trace_id)
    return {"id": str(trace.pk), "total": trace.lines_total, "state": trace.state}
