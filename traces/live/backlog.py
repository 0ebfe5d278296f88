"""Stored events read once for every viewer of a trace that misses the same ones.

When a broadcast overtakes an earlier one (two writers of a trace, the append and its
report refresh, commit one after the other and their on-commit sends race to the event
loop) or a full channel drops one, every viewer of the trace sees the same hole at the
same moment and fills it from the stored events. Read per viewer, that was 200 database
reads of the same rows, each encoded again, for one hole (bench/live.py, 200 viewers):
the server's slowest path, and it grew with the viewers. Here the viewers of a process
that ask for the same page while it is being read share that one read.

A shared read is only good for a viewer whose missing events were committed before the
read began; a viewer filling a hole knows which seq it needs (`through`), and it reads
again on its own when the shared page stops short of it (see `page_through`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

Page = list[tuple[int, str]]
"""(seq, JSON text) of stored events, in seq order."""

Reader = Callable[..., Awaitable[Page]]


class SharedBacklogReads:
    """The pages being read now, by event loop, trace, `after` and `limit`."""

    def __init__(self) -> None:
        self.reading: dict[tuple[int, str, int, int], asyncio.Future[Page]] = {}

    def clear(self) -> None:
        self.reading.clear()

    async def page(self, read: Reader, trace_id: Any, after: int, limit: int) -> Page:
        """The events after `after` (at most `limit`): the read in progress for the
        same page if there is one, else a new one that later askers share."""
        key = (id(asyncio.get_running_loop()), str(trace_id), after, limit)
        future = self.reading.get(key)
        if future is None:
            future = asyncio.ensure_future(read(trace_id=trace_id, after=after, limit=limit))
            self.reading[key] = future

            def forget(done: asyncio.Future[Page]) -> None:
                if self.reading.get(key) is done:
                    del self.reading[key]

            future.add_done_callback(forget)
        # shield: one viewer going away does not cancel the others' read
        return await asyncio.shield(future)

    async def page_through(
        self, read: Reader, trace_id: Any, after: int, limit: int, through: int
    ) -> Page:
        """The events after `after` that a viewer filling a hole up to `through` needs:
        the shared page when it holds `through` (or is full, so the caller reads on);
        otherwise the shared read began before those events were committed, and the
        viewer reads on its own."""
        page = await self.page(read, trace_id, after, limit)
        if len(page) >= limit or (page and page[-1][0] >= through):
            return page
        return await read(trace_id=trace_id, after=after, limit=limit)
