"""Proxied exchanges into live traces, off the response path.

`ExchangeRecording` keeps the copy of one HTTP exchange while it is relayed and, when it
ends, however it ends, hands it on to be turned into one line on the writer's thread
(masking the credentials and decoding the bodies is JSON work that would otherwise hold
the event loop before the response's last byte); `schedule_recording` stores lines (the HTTP
relay's and the Responses socket relay's) with one writer task per session, in the order
the exchanges ended, through `capture.lines.record_lines`, the live tail's own path.
`recording(session)` says whether any are still waiting (`manage.py record` and
`/api/captures/<session>` ask).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
import weakref
from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async

from traces.capture import lines as capture_lines
from traces.conf import inspector_settings
from traces.core.reading.capture import CLIENT_LEFT, CapturedExchange
from traces.stores import store

log = logging.getLogger(__name__)

Line = bytes | Callable[[], bytes]
"""A line to record, or what makes it (on the writer's thread, off the event loop)."""


class ExchangeRecording:
    """The copy of one exchange, recorded once when it ends, whichever way it ends."""

    def __init__(
        self, exchange: CapturedExchange, format_name: str, session: str, project: Any = None
    ) -> None:
        self.exchange = exchange
        self.format_name = format_name
        self.session = session
        self.project = project
        self.limit = int(inspector_settings()["PROXY_MAX_RESPONSE_BYTES"])
        self.body = bytearray()
        self.done = False
        self.held_back = False
        """Set by the fast path: the recording starts once the response is sent (`release`)."""
        self.line: Callable[[], bytes] | None = None
        """The finished exchange's line, made when the writer stores it (`_store`)."""
        self.ended_at: float | None = None
        """When the exchange ended, if it ended elsewhere (the forward proxy's hand-over):
        else the time `finish` is called."""

    def keep(self, chunk: bytes) -> None:
        if self.exchange.truncated_at is not None:
            return
        if len(self.body) + len(chunk) > self.limit:
            self.exchange.truncated_at = len(self.body)
            return
        self.body += chunk

    def on_task_done(self, task: asyncio.Task) -> None:
        if not self.done:
            self.client_left("the client disconnected mid-response")

    def client_left(self, problem: str) -> None:
        """The client hung up before the answer ended."""
        self.finish(interrupted=True, problem=problem, outcome=CLIENT_LEFT)

    def finish(
        self,
        *,
        interrupted: bool = False,
        problem: str | None = None,
        outcome: str | None = None,
    ) -> None:
        """Record the exchange as it ended: completed (no `problem`), or not, `outcome`
        saying how (`capture.CALL_OUTCOMES`: the client left, the upstream broke off…)."""
        if self.done:
            return
        self.done = True
        exchange = self.exchange
        exchange.ended_at = self.ended_at or time.time()
        exchange.response_body = exchange.response_body or bytes(self.body)
        exchange.interrupted = interrupted
        exchange.problem = problem
        exchange.outcome = outcome
        self.line = exchange.line
        if not self.held_back:
            self.release()

    def release(self) -> None:
        """Record the finished exchange (off the response path, in order per session)."""
        line, self.line = self.line, None
        if line is not None:
            schedule_recording(self.format_name, self.session, line, self.project)


class RecordingQueue:
    """Answered exchanges of this process not yet stored: the lines waiting for each
    session's writer task, per event loop, the writer tasks, and how many writers each
    session has at work. Used on event loops only (no lock, as asyncio needs none)."""

    def __init__(self) -> None:
        self.waiting: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, list[Line]]
        ] = weakref.WeakKeyDictionary()
        """Loop -> capture key -> the lines its writer takes next."""
        self.sessions: collections.Counter[str] = collections.Counter()
        """Sessions with calls answered but not yet stored (see `recording`)."""
        self._writers: set[asyncio.Task] = set()

    def add_writer(self, task: asyncio.Task) -> None:
        self._writers.add(task)
        task.add_done_callback(self._writers.discard)

    def writers(self) -> list[asyncio.Task]:
        """The writer tasks still at work (await them to see every line stored)."""
        return list(self._writers)

    def recording(self, session: str) -> bool:
        return self.sessions.get(session, 0) > 0

    def clear(self) -> None:
        """Forget what waits (as a fresh process, whose loops have none of it)."""
        self.waiting.clear()
        self.sessions.clear()
        self._writers.clear()


def schedule_recording(format_name: str, session: str, line: Line, project: Any = None) -> None:
    """Record off the response path; lines of one session are stored in the order their
    exchanges ended; `line` may be a callable that makes it, run on the writer's thread.
    One task per session writes them: lines that end while it is busy are stored
    together in its next batch (calls made back to back share one append)."""
    loop = asyncio.get_running_loop()
    key = capture_lines.proxy_key(format_name, session, project)
    queue = store(RecordingQueue)
    queues = queue.waiting.setdefault(loop, {})
    waiting = queues.get(key)
    if waiting is not None:  # the session's writer is busy: it takes this line next
        waiting.append(line)
        return
    queues[key] = [line]
    queue.sessions[session] += 1
    task = loop.create_task(_record(queue, queues, key, format_name, session, project))
    queue.add_writer(task)


async def _record(
    queue: RecordingQueue,
    queues: dict[str, list[Line]],
    key: str,
    format_name: str,
    session: str,
    project: Any,
) -> None:
    try:
        while queues[key]:
            lines, queues[key] = queues[key], []
            await sync_to_async(_store, thread_sensitive=False)(
                key, format_name, session, lines, project
            )
    finally:
        del queues[key]
        queue.sessions[session] -= 1
        if queue.sessions[session] <= 0:
            del queue.sessions[session]


def recording(session: str) -> bool:
    """Whether this process still has answered calls of `session` to store: `manage.py
    record` waits for them before it closes the session's traces."""
    return store(RecordingQueue).recording(session)


def _store(key: str, format_name: str, session: str, pending: list[Line], project: Any) -> None:
    """Make the batch's lines, then append them; one that fails is retried line by line,
    so one bad line (too large, say) does not lose the others."""
    lines = _made(pending, session)
    if not lines:
        return
    batches = [lines] if len(lines) == 1 else [lines, *([line] for line in lines)]
    for batch in batches:
        try:
            capture_lines.record_lines_on_thread(
                key=key,
                format_name=format_name,
                name=capture_lines.proxy_trace_name(format_name, session),
                lines=batch,
                project=project,
            )
        except Exception:
            if len(batch) == 1:
                log.exception("could not record a proxied call in session %s", session)
            continue
        if batch is lines:
            return


def _made(pending: list[Line], session: str) -> list[bytes]:
    """The lines of a batch, made now where given as callables; one that cannot be made
    is logged and left out (the others are stored)."""
    lines = []
    for line in pending:
        if isinstance(line, bytes):
            lines.append(line)
            continue
        try:
            lines.append(line())
        except Exception:
            log.exception("could not record a proxied call in session %s", session)
    return lines
