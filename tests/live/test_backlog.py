"""Viewers that fill the same hole share one read (traces.live.backlog): the read is a
plain coroutine over a list here, the stored events' stand-in, so the test can hold it
open while other viewers ask and add events while it runs."""

from __future__ import annotations

import asyncio

from traces.live.backlog import SharedBacklogReads


class Stored:
    """Events `(seq, text)` and the reads made of them; a read waits for `release`."""

    def __init__(self, last: int) -> None:
        self.events = [(seq, f"event {seq}") for seq in range(1, last + 1)]
        self.reads = 0
        self.release = asyncio.Event()

    async def read(self, *, trace_id, after: int, limit: int):
        self.reads += 1
        taken = [event for event in self.events if event[0] > after][:limit]
        await self.release.wait()
        return taken


def test_viewers_asking_for_the_same_page_while_it_is_read_share_the_read():
    async def scenario():
        stored, shared = Stored(last=30), SharedBacklogReads()
        asks = [
            asyncio.ensure_future(shared.page_through(stored.read, "t", 10, 1000, 30))
            for _ in range(5)
        ]
        await asyncio.sleep(0.01)
        stored.release.set()
        pages = await asyncio.gather(*asks)
        assert stored.reads == 1
        assert all(page == stored.events[10:] for page in pages)
        assert shared.reading == {}  # forgotten once read: the next hole reads anew
        await shared.page_through(stored.read, "t", 10, 1000, 30)
        assert stored.reads == 2

    asyncio.run(scenario())


def test_a_shared_page_that_stops_short_of_the_hole_is_read_again():
    """The shared read began before the later viewer's events were committed: that viewer
    reads on its own rather than miss them."""

    async def scenario():
        stored, shared = Stored(last=20), SharedBacklogReads()
        first = asyncio.ensure_future(shared.page_through(stored.read, "t", 10, 1000, 20))
        await asyncio.sleep(0.01)  # its read has taken events 11..20
        stored.events += [(seq, f"event {seq}") for seq in range(21, 26)]
        later = asyncio.ensure_future(shared.page_through(stored.read, "t", 10, 1000, 25))
        await asyncio.sleep(0.01)
        stored.release.set()
        assert [seq for seq, _ in await first] == list(range(11, 21))
        assert [seq for seq, _ in await later] == list(range(11, 26))
        assert stored.reads == 2

    asyncio.run(scenario())


def test_other_traces_and_other_pages_are_not_shared():
    async def scenario():
        stored, shared = Stored(last=30), SharedBacklogReads()
        stored.release.set()
        await asyncio.gather(
            shared.page_through(stored.read, "t", 10, 1000, 30),
            shared.page_through(stored.read, "u", 10, 1000, 30),
            shared.page_through(stored.read, "t", 20, 1000, 30),
        )
        assert stored.reads == 3

    asyncio.run(scenario())
