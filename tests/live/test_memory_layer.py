"""The in-memory channel layer of a one-process server (traces.live.memory_layer): the
behaviour of channels' own layer, minus its per-message walks."""

from __future__ import annotations

import asyncio

import pytest
from channels.exceptions import ChannelFull

from traces.live import memory_layer
from traces.live.memory_layer import FanOutMemoryLayer


def test_a_group_send_reaches_every_member_with_a_message_of_its_own():
    async def scenario():
        layer = FanOutMemoryLayer()
        channels = [await layer.new_channel() for _ in range(3)]
        for channel in channels:
            await layer.group_add("trace.x", channel)
        await layer.group_send("trace.x", {"type": "trace.events", "first": 1, "text": "a"})
        got = [await layer.receive(channel) for channel in channels]
        assert got == [{"type": "trace.events", "first": 1, "text": "a"}] * 3
        got[0]["text"] = "changed"
        assert got[1]["text"] == "a"  # one receiver's change is not another's
        nested = {"type": "x", "items": [1, 2]}
        await layer.group_send("trace.x", nested)
        copies = [await layer.receive(channel) for channel in channels]
        copies[0]["items"].append(3)
        assert copies[1]["items"] == [1, 2] and nested["items"] == [1, 2]
        await layer.group_discard("trace.x", channels[0])
        await layer.group_send("trace.x", {"type": "y"})
        assert [await layer.receive(channel) for channel in channels[1:]] == [{"type": "y"}] * 2
        assert channels[0] not in layer.channels  # it was sent nothing

    asyncio.run(scenario())


def test_a_full_channel_refuses_a_send_and_misses_a_group_send():
    async def scenario():
        layer = FanOutMemoryLayer(capacity=2)
        full, other = await layer.new_channel(), await layer.new_channel()
        for channel in (full, other):
            await layer.group_add("trace.x", channel)
        await layer.send(full, {"type": "a"})
        await layer.send(full, {"type": "b"})
        with pytest.raises(ChannelFull):
            await layer.send(full, {"type": "c"})
        await layer.group_send("trace.x", {"type": "d"})  # not raised: `full` misses it
        assert [await layer.receive(full) for _ in range(2)] == [{"type": "a"}, {"type": "b"}]
        assert await layer.receive(other) == {"type": "d"}

    asyncio.run(scenario())


def test_expired_messages_are_dropped_and_their_channel_leaves_its_groups(monkeypatch):
    async def scenario():
        layer = FanOutMemoryLayer(expiry=0)
        stale, fresh = await layer.new_channel(), await layer.new_channel()
        await layer.group_add("trace.x", stale)
        await layer.send(stale, {"type": "old"})
        await asyncio.sleep(0.01)
        layer.cleaned_at = 0.0  # a second has passed since the last cleaning
        await layer.group_send("trace.x", {"type": "new"})  # cleans first
        assert stale not in layer.groups.get("trace.x", {})
        assert stale not in layer.channels
        # Cleaning is rate-limited: right after one, a stale message stays until the next.
        await layer.group_add("trace.x", fresh)
        await layer.send(fresh, {"type": "old"})
        await asyncio.sleep(0.01)
        monkeypatch.setattr(memory_layer, "CLEAN_SECONDS", 60.0)
        await layer.group_send("trace.x", {"type": "new"})
        assert fresh in layer.groups["trace.x"]

    asyncio.run(scenario())
