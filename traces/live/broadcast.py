"""The one way out to live viewers: send a live trace's new events to its channels group.

Everything outside the consumers calls `broadcast`, after the events are committed
(`transaction.on_commit`), so a viewer that reads the stored backlog and one that gets the
pushed message see the same rows. Works with the in-memory layer in one process and with
channels_redis across processes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

log = logging.getLogger(__name__)

MESSAGE_TYPE = "trace.events"
"""Handled by `TraceViewerConsumer.trace_events`."""

REMOTE_CHUNK = 500
"""Events per message of a layer that crosses processes (Redis): a batch of a thousand
lines is a few messages of some hundred kilobytes, not one of megabytes. The in-memory
layer sends a whole batch as one message: each message costs every viewer a wake-up
and a websocket frame, whatever its size (bench/live.py)."""


def group_name(trace_id: uuid.UUID | str) -> str:
    """The channels group of one trace's viewers (ASCII, under the 100-character limit)."""
    return f"trace.{uuid.UUID(str(trace_id)).hex}"


def may_listen(trace_id: uuid.UUID | str) -> bool:
    """False when no page of the trace can be open: the in-memory layer (this process is
    its only one) has no member in the trace's group. Then events need no encoding and no
    hop to an event loop: a viewer joining now reads the committed events from its
    backlog, as it joins the group before reading it. True for any other layer."""
    layer = get_channel_layer()
    if layer is None:
        return False
    if isinstance(layer, InMemoryChannelLayer):
        return bool(layer.groups.get(group_name(trace_id)))
    return True


def broadcast(trace_id: uuid.UUID | str, first_seq: int, texts: Sequence[str]) -> None:
    """Push events numbered `first_seq`, `first_seq + 1`, ... to every open page of the
    trace. Each text is the JSON message viewers receive (`{"type", "seq", "data"}`),
    encoded once; a group message carries them as one NDJSON string (the whole batch,
    or REMOTE_CHUNK of it), which the in-memory layer hands each viewer without copying
    it and a consumer sends as it is.

    A failure to reach the layer is logged, never raised: the events are stored, and a
    viewer that missed them fetches them by `seq` on its next message or reconnection.
    """
    if not texts:
        return
    layer = get_channel_layer()
    if layer is None or not may_listen(trace_id):
        return
    group = group_name(trace_id)
    chunk = len(texts) if isinstance(layer, InMemoryChannelLayer) else REMOTE_CHUNK
    messages = [
        {
            "type": MESSAGE_TYPE,
            "first": first_seq + start,
            "last": first_seq + start + len(part) - 1,
            "text": "\n".join(part),
        }
        for start in range(0, len(texts), chunk)
        if (part := texts[start : start + chunk])
    ]

    async def send_all() -> None:
        for message in messages:
            await layer.group_send(group, message)

    try:
        async_to_sync(send_all)()  # one hop to the event loop for all of them
    except Exception:  # the layer being down must not undo an accepted batch
        log.exception("could not broadcast %d live event(s) of trace %s", len(texts), trace_id)
