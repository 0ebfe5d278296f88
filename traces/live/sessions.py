"""Each process's cache of live sessions: a core `TraceSession` per live trace, fed new lines.

A process whose session is behind the stored total (another process appended) first
replays the chunks it missed; one without a session rebuilds it from all chunks. The
cache is an optimisation only: any process (a web process, a queue worker) can rebuild
any trace's session from its stored chunks.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from traces import models
from traces.conf import inspector_settings, limits
from traces.core.analysis.ingest import FormatChoice, TraceSession
from traces.core.model import LineError
from traces.core.model import Trace as CoreTrace
from traces.core.reading.records import Record, numbered_items
from traces.storage import originals
from traces.stores import store

V = TypeVar("V")


def split_body(body: bytes) -> list[bytes]:
    """NDJSON request body -> lines; a last line without its newline is a line too."""
    if not body:
        return []
    lines = body.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def terminated(line: bytes) -> bytes:
    """Each stored line ends with one newline, so the chunks concatenate into JSONL."""
    return line if line.endswith(b"\n") else line + b"\n"


def parse_lines(lines: Sequence[bytes], first_line: int) -> Iterator[Record | LineError]:
    """The core's record reader on a batch of lines numbered from `first_line`."""
    return numbered_items(lines, first_line, limits())


def locked_trace(trace_id: Any, *, with_report: bool = True) -> models.Trace:
    """The trace row, locked until the transaction ends (appends skip the big report)."""
    rows = models.Trace.objects.select_for_update()
    return (rows if with_report else rows.defer("report")).get(pk=trace_id)


@dataclass
class LiveEntry:
    """One live trace's session in this process; `lock` serialises its use here."""

    trace_id: str
    lock: threading.RLock = field(default_factory=threading.RLock)
    session: TraceSession | None = None
    lines_fed: int = 0
    held: list[dict[str, Any]] = field(default_factory=list)
    """The held responses last told to viewers (see `events.held_payload`)."""

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
                self.session.feed(parse_lines(lines, chunk.first_line))
                self.lines_fed = chunk.first_line + chunk.line_count - 1
        return self.session


class TraceLru(Generic[V]):
    """One value per trace id, the least recently kept dropped first, behind one lock:
    what this process keeps of a live trace is an optimisation it can always rebuild."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def _keep(self, key: str, value: V, most: int) -> None:
        """Store `value` as the most recent, dropping the oldest past `most` (the caller
        holds the lock)."""
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > most:
            self._items.popitem(last=False)

    def forget(self, trace_id: Any) -> None:
        with self._lock:
            self._items.pop(str(trace_id), None)

    def clear(self) -> None:
        """Drop everything (tests use it to act as a fresh process)."""
        with self._lock:
            self._items.clear()


class SessionCache(TraceLru[LiveEntry]):
    """An LRU of live entries, at most LIVE_SESSIONS (a cold one is rebuilt from chunks)."""

    def entry(self, trace_id: Any) -> LiveEntry:
        key = str(trace_id)
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                entry = LiveEntry(key)
            self._keep(key, entry, inspector_settings()["LIVE_SESSIONS"])
            return entry

    def swap_entries(self, other: SessionCache) -> None:
        """Exchange every session with `other`'s: this cache then holds what another
        process would (tests alternate two processes appending to one trace)."""
        with self._lock, other._lock:
            self._items, other._items = other._items, self._items


class AppendSessions(SessionCache):
    """This process's sessions of the appends (`live.append_lines`)."""


class ReportSessions(SessionCache):
    """The report builder's sessions, apart from the appends': a refresh never holds a
    lock an append waits for, wherever the queue runs it (a worker process builds its own
    from the stored chunks, as this one does when it falls behind)."""


def forget_sessions() -> None:
    store(AppendSessions).clear()
    store(ReportSessions).clear()
    store(Snapshots).clear()


SNAPSHOTS_KEPT = 1000
"""Snapshots waiting for their report refresh, at most (a burst of new traces, such as
an OTLP export of many agent runs, has one each)."""


class Snapshots(TraceLru[tuple[int, CoreTrace, list[dict[str, Any]]]]):
    """The last snapshot each append made of a live trace in this process, once committed:
    a report refresh that finds one covering every stored line builds the report from
    it, without replaying the trace's chunks into a session of its own. Snapshots are
    immutable (`TraceBuilder.snapshot`), so any thread may read them."""

    def remember(
        self, trace_id: Any, lines: int, snapshot: CoreTrace, held: list[dict[str, Any]]
    ) -> None:
        key = str(trace_id)
        with self._lock:
            known = self._items.get(key)
            if known is not None and known[0] > lines:
                return  # a later append's is there already
            self._keep(key, (lines, snapshot, held), SNAPSHOTS_KEPT)

    def covering(self, trace_id: Any, lines: int) -> tuple[CoreTrace, list[dict[str, Any]]] | None:
        """The snapshot of exactly the first `lines` lines, if this process made it
        (handed out once: it is held only until the refresh it is for)."""
        with self._lock:
            known = self._items.get(str(trace_id))
            if known is None or known[0] != lines:
                return None
            del self._items[str(trace_id)]
        return known[1], known[2]
