"""The embedded queue's in-memory storage, whose workers wake when a task is queued.

Huey's `MemoryStorage` cannot block, so its workers poll: an idle worker slept up to
`max_delay` (0.1 s) between looks, and a task queued meanwhile waited for the end of that
sleep. An OTLP export's store is such a task: it waited 50 ms on average, 100 ms at worst,
between the exporter's answer and the traces being stored (bench/otlp.py). Here a worker
with nothing to do waits on a condition that `enqueue` notifies, as Huey's Redis storage
blocks on BRPOP, and Huey skips its poll sleep for a blocking storage. The wait is cut
short every WAIT_SECONDS, so a stopping consumer's workers see their stop flag (and
`wake_all` ends it at once).

No Django here: the settings name the class (settings.HUEY's `huey_class`).
"""

from __future__ import annotations

import threading
from typing import Any

from huey.api import Huey
from huey.storage import MemoryStorage

WAIT_SECONDS = 0.5
"""How long an idle worker waits for a task before it looks at its stop flag."""


class WakingMemoryStorage(MemoryStorage):
    """`MemoryStorage` whose `dequeue` waits for a task (see the module's docstring)."""

    blocking = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._queued = threading.Condition(self._lock)

    def enqueue(self, data: bytes, priority: float | None = None) -> None:
        with self._queued:
            super().enqueue(data, priority=priority)
            self._queued.notify()

    def dequeue(self) -> bytes | None:
        with self._queued:
            if not self._queue:
                self._queued.wait(WAIT_SECONDS)
            return super().dequeue()

    def wake_all(self) -> None:
        """Every waiting worker looks again now (a consumer that stops)."""
        with self._queued:
            self._queued.notify_all()


class WakingMemoryHuey(Huey):
    """Huey's `MemoryHuey`, on `WakingMemoryStorage`."""

    storage_class = WakingMemoryStorage
