"""Websockets of live traces: viewers follow a trace, agents push lines into one.

`/ws/traces/<id>/` (viewers): every new call, tool run, finding and state change of the
trace, as `{"type", "seq", "data"}` JSON messages in `seq` order; a text frame holds the
messages of one batch, one per line (NDJSON). `?after=<seq>` resumes
after the last message a page has: the consumer joins the trace's group first, then
sends the stored backlog, then the stream, dropping anything at or below the last `seq`
sent and filling any hole from the stored events, so nothing is missed or repeated.
A hole at the end (the last broadcast never reached this channel: channels_redis drops
messages for a full or expired channel) has no later message to reveal it, so the page
asks: `{"type": "ping"}` sends every stored event after the last one sent (the backlog
path), then `{"type": "pong", "seq": <last sent>, "last": <the trace's stored last seq>,
"state": …}`; `{"type": "resume", "after": N}` does the same from N (a page that saw a
gap, or lost what it had), then pongs.

`/ws/ingest/<id>/` (agents): text frames `{"offset": N, "lines": ["…", …]}` are appended
exactly like `POST /api/traces/<id>/lines?offset=N`; the reply is `{"type": "ack",
"total": M, "accepted": k}` or `{"type": "error", "expected": M}` for a gap. A frame
`{"type": "close"}` closes the trace.

Consumers touch the database only through `database_sync_to_async`. A viewer's reads
(its access check, the trace's state, the stored backlog and head; an agent socket's
first look at its trace too) run on the event loop's thread pool (`traces.storage.pool_reads`),
not on the one thread that every thread-sensitive call of websockets shares in a process:
in a reconnect storm after a web process died, each handshake queued there behind every
other socket's work, past daphne's 5 s handshake timeout (bench/load.py: viewers that
never got back in). Each such call closes its connections when it ends, so a pool
thread keeps none.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from traces import live, models
from traces.access.rate_limit import charge
from traces.access.rules import Access, access
from traces.core.reading.limits import InputRejected
from traces.live.backlog import SharedBacklogReads
from traces.live.broadcast import group_name
from traces.live.idle import request_sweep
from traces.storage.pool_reads import pool_read
from traces.stores import store

log = logging.getLogger(__name__)

BACKLOG_PAGE = 1000
FRAME_EVENTS = 200
"""Backlog events per frame, so a late viewer's first frames stay small."""
NOT_FOUND = 4404
NOT_LIVE = 4409
CATCH_UP_SECONDS = 1.0
"""A ping reads the database at most this often per socket; between, it is answered from
what the socket knows (a resume always reads)."""


def _after(query_string: bytes) -> int:
    values = parse_qs(query_string.decode("latin-1")).get("after", ["0"])
    try:
        return max(0, int(values[-1]))
    except ValueError:
        return 0


GROUP_ATTEMPTS = 8
"""Tries to join or leave a group: with Redis, hundreds of sockets dropping at once can
exhaust the connection pool for a moment (`MaxConnectionsError`); a dead channel left in
the group would be sent every later broadcast until the group expires."""


async def _with_retries(action, *args: Any) -> bool:
    """Await `action(*args)`, retrying with jittered back-off on layer errors."""
    for attempt in range(GROUP_ATTEMPTS):
        try:
            await action(*args)
            return True
        except Exception as exc:  # redis-py raises ConnectionError subclasses, among others
            if attempt == GROUP_ATTEMPTS - 1:
                log.warning(
                    "channel layer %s failed %d times: %s", action.__name__, attempt + 1, exc
                )
                return False
            await asyncio.sleep(min(2.0, 0.05 * 2**attempt) * (0.5 + random.random()))
    return False


def decode_frame(text_data: str | None) -> tuple[Any, str | None]:
    """(JSON value, None) of a text frame, or (None, why it cannot be read)."""
    if text_data is None:
        return None, "send text frames of JSON"
    try:
        return json.loads(text_data), None
    except RecursionError:
        return None, "the frame is nested too deeply"
    except ValueError:
        return None, "not a JSON text frame"


@pool_read
def _trace_state(trace_id: Any) -> str | None:
    """The trace's state; opening a socket asks the queue to close idle live traces."""
    request_sweep()
    state = models.Trace.objects.filter(pk=trace_id).values_list("state", flat=True).first()
    return state


@pool_read
def _stored_head(trace_id: Any) -> tuple[int, str] | None:
    """(last stored event seq, state) of the trace, or None once it is gone."""
    return models.Trace.objects.filter(pk=trace_id).values_list("events_seq", "state").first()


class NoSyncThreadHops:
    """Handles each message without channels' hop to the sync thread first.

    Channels (4.2 on) awaits `aclose_old_connections()` before every message a consumer
    handles and after its disconnect: a call on the process's one sync thread that closes
    that thread's stale database connections. For a viewer that is a hop per frame it
    sends, per broadcast it is given and per handshake, all queued on one thread: with
    200 viewers, a handshake waited there behind thousands of them, past daphne's
    handshake timeout. These consumers never touch a connection on the event loop, only
    through `database_sync_to_async`, which closes its thread's stale connections before
    and after each call itself, so the hop closes nothing of theirs."""

    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        """Channels' own, without the hop (these consumers list no `groups`)."""
        await self.disconnect(message["code"])  # type: ignore[attr-defined]
        raise StopConsumer()


_stored_page = pool_read(live.encoded_events_after)
"""(seq, JSON text) of the stored events after a seq: a backlog page."""


@access(Access.READ)
class TraceViewerConsumer(NoSyncThreadHops, AsyncJsonWebsocketConsumer):
    """One open trace page."""

    group: str | None = None
    caught_up_at = 0.0
    stored_last = 0
    stored_state = ""

    async def connect(self) -> None:
        self.trace_id = self.scope["url_route"]["kwargs"]["trace_id"]
        self.last_sent = _after(self.scope.get("query_string", b""))
        state = await _trace_state(self.trace_id)
        if state is None:
            await self.close(code=NOT_FOUND)
            return
        self.stored_state = state
        # Join before reading the backlog: an event committed meanwhile arrives by both
        # ways and is sent once.
        group = group_name(self.trace_id)
        if not await _with_retries(self.channel_layer.group_add, group, self.channel_name):
            await self.close(code=1013)  # try again later
            return
        self.group = group
        await self.accept()
        await self._send_stored(through=None)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await _with_retries(self.channel_layer.group_discard, self.group, self.channel_name)
            self.group = None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        content, problem = decode_frame(text_data)
        if problem:
            await self.send_json({"type": "error", "error": problem})
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Viewers only listen, and ask for what they may have missed: `ping` and
        `resume` (see the module's docstring)."""
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "resume":
            after = content.get("after")
            if type(after) is not int or after < 0:
                await self.send_json({"type": "error", "error": "after must be a seq >= 0"})
                return
            await self._catch_up(rewind_to=after)
        elif kind == "ping":
            if time.monotonic() - self.caught_up_at >= CATCH_UP_SECONDS:
                await self._catch_up(rewind_to=None)
            else:
                await self._pong()

    async def _catch_up(self, rewind_to: int | None) -> None:
        """Every stored event after the last sent (or after `rewind_to`), then a pong."""
        if not await self.still_allowed():
            return
        self.caught_up_at = time.monotonic()
        head = await _stored_head(self.trace_id)
        if head is None:
            await self.close(code=NOT_FOUND)
            return
        self.stored_last, self.stored_state = head
        if rewind_to is not None:
            self.last_sent = min(self.last_sent, rewind_to)
        if self.stored_last > self.last_sent:
            await self._send_stored(through=self.stored_last)
        await self._pong()

    async def _pong(self) -> None:
        await self.send_json(
            {
                "type": "pong",
                "seq": self.last_sent,
                "last": max(self.stored_last, self.last_sent),
                "state": self.stored_state,
            }
        )

    async def trace_events(self, message: dict[str, Any]) -> None:
        """Events broadcast by `traces.live.broadcast` (the group message type `trace.events`):
        seqs `first`..`last`, already encoded as one NDJSON `text`."""
        first, last = message["first"], message["last"]
        if last <= self.last_sent:
            return  # seen already (from the backlog, or a repeated message)
        if not await self.still_allowed():
            return
        if first > self.last_sent + 1:
            # A message was lost or overtaken (another process, a full channel): the
            # stored events fill the hole.
            await self._send_stored(through=first - 1)
        text = message["text"]
        if first <= self.last_sent:  # partly seen: keep the lines after the last sent
            text = "\n".join(text.split("\n")[self.last_sent + 1 - first :])
        await self.send(text_data=text)
        self.last_sent = last

    async def _send_stored(self, through: int | None) -> None:
        """The stored events after the last sent, through `through` (None: all). A hole's
        fill (`through` known) shares its read with the trace's other viewers
        (traces.live.backlog); a backlog at connect or catch-up reads on its own, as
        it needs whatever was committed before it asked."""
        while through is None or self.last_sent < through:
            if through is None:
                page = await _stored_page(
                    trace_id=self.trace_id, after=self.last_sent, limit=BACKLOG_PAGE
                )
            else:
                page = await store(SharedBacklogReads).page_through(
                    _stored_page, self.trace_id, self.last_sent, BACKLOG_PAGE, through
                )
            texts = []
            for seq, text in page:
                if through is not None and seq > through:
                    break
                texts.append(text)
                self.last_sent = seq
            for start in range(0, len(texts), FRAME_EVENTS):
                await self._send_frame(texts[start : start + FRAME_EVENTS])
            if len(page) < BACKLOG_PAGE or len(texts) < len(page):
                return

    async def _send_frame(self, texts: list[str]) -> None:
        """One websocket frame per batch: messages one per line (NDJSON). Per-frame work
        in the server dominates with many viewers, so batches are not split."""
        if texts:
            await self.send(text_data="\n".join(texts))


@access(Access.INGEST)
class TraceIngestConsumer(NoSyncThreadHops, AsyncJsonWebsocketConsumer):
    """An agent keeping a socket open to append lines with acknowledgements."""

    async def connect(self) -> None:
        self.trace_id = self.scope["url_route"]["kwargs"]["trace_id"]
        state = await _trace_state(self.trace_id)
        if state is None:
            await self.close(code=NOT_FOUND)
        elif state != models.Trace.State.LIVE:
            await self.close(code=NOT_LIVE)
        else:
            await self.accept()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        content, problem = decode_frame(text_data)
        if problem:
            await self._error(problem)
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not await self.still_allowed():
            return
        if isinstance(content, dict) and content.get("type") == "close":
            trace = await database_sync_to_async(live.close_live_trace)(trace_id=self.trace_id)
            await self.send_json({"type": "closed", "total": trace.lines_total})
            await self.close()
            return
        problem = _frame_problem(content)
        if problem:
            await self._error(problem)
            return
        lines, problem = _encoded(content["lines"], content["offset"])
        if problem:
            await self._error(problem)
            return
        token = getattr(self.scope.get("principal"), "token", None)
        if token is not None:
            wait = await database_sync_to_async(charge)(
                token.pk, nbytes=sum(len(line) + 1 for line in lines)
            )
            if wait:
                await self.send_json(
                    {"type": "error", "error": "rate limit reached", "retry_after": wait}
                )
                return
        try:
            result = await database_sync_to_async(live.append_lines)(
                trace_id=self.trace_id, offset=content["offset"], lines=lines
            )
        except live.OffsetGap as gap:
            await self.send_json({"type": "error", "expected": gap.expected, "error": str(gap)})
        except live.TraceNotLive as not_live:
            await self.send_json({"type": "error", "state": not_live.state, "error": str(not_live)})
            await self.close(code=NOT_LIVE)
        except InputRejected as exc:
            await self._error(str(exc))
        else:
            await self.send_json(
                {"type": "ack", "total": result.total, "accepted": result.accepted}
            )

    async def _error(self, message: str) -> None:
        await self.send_json({"type": "error", "error": message})


def _encoded(texts: list[str], offset: int) -> tuple[list[bytes], str | None]:
    """The lines as UTF-8, or why one cannot be (a lone surrogate such as "\\ud800")."""
    lines = []
    for number, text in enumerate(texts):
        try:
            lines.append(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            bad = exc.object[exc.start : exc.end]
            return [], (
                f"line {offset + number + 1} (item {number + 1} of the frame) is not valid "
                f"Unicode text: it holds {bad!a} ({exc.reason}); nothing of this frame was stored"
            )
    return lines, None


def _frame_problem(content: Any) -> str | None:
    if not isinstance(content, dict):
        return 'a frame is a JSON object: {"offset": N, "lines": ["...", ...]}'
    offset = content.get("offset")
    if type(offset) is not int or offset < 0:
        return "offset must be the number of lines sent before this frame (an integer >= 0)"
    lines = content.get("lines")
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        return "lines must be a list of strings, one JSON line each"
    if any("\n" in line for line in lines):
        return "a line may not contain a newline"
    return None
