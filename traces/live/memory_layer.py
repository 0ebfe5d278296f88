"""The in-memory channel layer of a one-process server, without its per-message costs.

Channels' `InMemoryChannelLayer` walks every channel's queue and every group's members
before each `receive` and each `group_send` (expiry), makes one task per member for a
group send, and deep-copies the message once per member. With 200 viewers of a trace
fed 1,000 lines a second that was most of the event loop's own work (bench/live.py,
cProfile of the server: `_clean_expired` alone took a tenth of it), and it grew with
viewers squared: each viewer's receive walked all 200 queues. This layer keeps the
same behaviour (capacity, expiry of messages and of group memberships, `ChannelFull`
dropped in a group send) and does that work at most once a second, puts a group's
message straight into each member's queue, and copies a message whose values are all
immutable (ours: `traces.live.broadcast`) with a shallow copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from copy import deepcopy
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

CLEAN_SECONDS = 1.0
"""Expired messages and memberships are looked for at most this often; expiry is
measured in tens of seconds, so one more second changes nothing a viewer sees."""

_IMMUTABLE = (str, bytes, int, float, bool, type(None))


def _copy(message: dict[str, Any]) -> dict[str, Any]:
    """What each receiver gets: its own dict; nested values copied only if mutable."""
    if all(isinstance(value, _IMMUTABLE) for value in message.values()):
        return dict(message)
    return deepcopy(message)


class FanOutMemoryLayer(InMemoryChannelLayer):
    """`InMemoryChannelLayer` whose cleaning is rate-limited and whose group sends are
    one loop over the members (see the module's docstring)."""

    cleaned_at = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self.cleaned_at < CLEAN_SECONDS:
            return
        self.cleaned_at = now
        super()._clean_expired()

    async def receive(self, channel: str) -> dict[str, Any]:
        """As channels' own, without making a queue to throw away on every call."""
        self.require_valid_channel_name(channel)
        self._clean_expired()
        queue = self._queue(channel)
        try:
            _, message = await queue.get()
        finally:
            if queue.empty():
                self.channels.pop(channel, None)
        return message

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        self._put(channel, _copy(message))

    def _queue(self, channel: str) -> asyncio.Queue:
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        return queue

    def _put(self, channel: str, message: dict[str, Any]) -> None:
        try:
            self._queue(channel).put_nowait((time.time() + self.expiry, message))
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "Message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            # as channels' own layer: a full channel's viewer fills the hole from the store
            with contextlib.suppress(ChannelFull):
                self._put(channel, _copy(message))
