"""Captured lines into live traces: the recording proxy and the OTLP receiver write here.

A capture names its live trace by a key (`proxy:<format>:<session>`, `otlp:<trace id>`)
stored on the trace row; the first line under a key creates the trace, and a trace that
was closed (explicitly, or after `LIVE_IDLE_SECONDS` without a line) is followed by a
new one under the same key: the default proxy session rolls over by itself. Each line
goes through `live.append_lines`, the live tail's own path, so a captured call is stored,
reported and pushed to viewers exactly like a tailed one.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from typing import Any

from django.db import connection

from traces import live, models
from traces.live.idle import request_sweep
from traces.storage.db_scope import connection_scope
from traces.stores import store

DEFAULT_SESSION = "default"


class CaptureKeys:
    """Per capture key in this process: the live trace last appended to under it, and a
    lock, so two first lines make one trace, not two."""

    def __init__(self) -> None:
        self.live_ids: dict[str, uuid.UUID] = {}
        """Key -> the live trace this process last appended to under it."""
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def lock_for(self, key: str) -> threading.Lock:
        """One lock per key in this process."""
        with self._guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
            return lock

    def clear(self) -> None:
        """Forget the known traces (the locks stay: one may be held right now)."""
        self.live_ids.clear()


def live_trace_for(
    key: str,
    *,
    format_name: str,
    name: str,
    project: models.Project | None = None,
    sweep: bool = True,
    absent: bool = False,
) -> tuple[uuid.UUID, models.Trace | None]:
    """The id of the live trace filed under `key`, and its row when this call created it
    (None when it was there already). Creating one asks the queue for a sweep of idle
    traces (`live.idle`); `sweep=False`: the caller asked for it, once for many traces.
    `absent=True`: the caller has just found no live trace under the key (`capturing`,
    in its open transaction), so none is looked for again.

    A known trace is returned by id alone, no row built: a `Trace()` without a project
    asks the database for the default project, one query per proxied call."""
    keys = store(CaptureKeys)
    with keys.lock_for(key):
        known = keys.live_ids.get(key)
        if known is not None:  # `append_lines` refuses it if it closed meanwhile
            return known, None
        found = (
            None
            if absent
            else models.Trace.objects.filter(capture_key=key, state=models.Trace.State.LIVE)
            .order_by("-created_at")
            .values_list("pk", flat=True)
            .first()
        )
        created = None
        if found is None:
            if sweep:
                request_sweep()
            created = live.create_live_trace(
                name=name, format_name=format_name, project=project, capture_key=key
            )
            found = created.pk
        if len(keys.live_ids) > 10_000:
            keys.live_ids.clear()
        keys.live_ids[key] = found
        return found, created


def capturing(keys: Sequence[str]) -> set[str]:
    """The keys that have a live trace now, in one query (their ids remembered for
    `live_trace_for`)."""
    rows = (
        models.Trace.objects.filter(capture_key__in=list(keys), state=models.Trace.State.LIVE)
        .order_by("created_at")
        .values_list("capture_key", "pk")
    )
    found = set()
    live_ids = store(CaptureKeys).live_ids
    for key, pk in rows:  # the newest last: it wins, as in `live_trace_for`
        live_ids[key] = pk
        found.add(key)
    for key in keys:
        if key not in found:
            live_ids.pop(key, None)
    return found


def record_lines(
    *,
    key: str,
    format_name: str,
    name: str,
    lines: Sequence[bytes],
    project: models.Project | None = None,
    sweep: bool = True,
    absent: bool = False,
) -> uuid.UUID:
    """Append lines to the live trace under `key` (a new one if it closed); its id.
    `absent`: as for `live_trace_for` (the first attempt only).

    Callers on a thread of their own (the proxy, the OTLP receiver) close stale database
    connections around it, outside any transaction."""
    for attempt in range(3):
        trace_id, created = live_trace_for(
            key,
            format_name=format_name,
            name=name,
            project=project,
            sweep=sweep,
            absent=absent and attempt == 0,
        )
        try:
            live.append_lines(
                trace_id=trace_id,
                offset=None,
                lines=lines,
                # Created inside the caller's open transaction (the OTLP receiver's):
                # unseen by any other writer until it commits, so the append takes the
                # row as it is.
                created=created if created is not None and connection.in_atomic_block else None,
            )
        except (live.TraceNotLive, models.Trace.DoesNotExist):
            # Closed (for idleness a moment ago, or by the `record` command) or deleted:
            # the key rolls over.
            store(CaptureKeys).live_ids.pop(key, None)
            continue
        return trace_id
    raise live.TraceNotLive(models.Trace.State.CLOSED)


def record_lines_on_thread(**kwargs: Any) -> uuid.UUID:
    """`record_lines` from a worker thread, inside a `connection_scope`."""
    with connection_scope():
        return record_lines(**kwargs)


def in_project(key: str, project: models.Project | None) -> str:
    """The key filed under a project: sessions and OTel trace ids of different projects
    never share a live trace (the default project keeps the bare key)."""
    if project is None or project.slug == models.DEFAULT_PROJECT_SLUG:
        return key
    return f"p{project.pk}:{key}"


def proxy_key(format_name: str, session: str, project: models.Project | None = None) -> str:
    return in_project(f"proxy:{format_name}:{session}", project)


def proxy_trace_name(format_name: str, session: str) -> str:
    return f"proxy · {session} · {format_name}"


def session_traces(session: str, who: Any = None) -> list[models.Trace]:
    """The proxy traces of a session, newest first (one per API format it used); only
    those `who` (a principal) may read, when given."""
    found = models.Trace.objects.filter(
        capture_key__contains="proxy:", capture_key__endswith=f":{session}"
    )
    if who is not None:
        found = who.traces(found)
    return list(found.defer("report").order_by("-created_at"))
