"""Live traces that went quiet are closed by a queue task, never inside a request.

`sweep_idle` closes every live trace idle for LIVE_IDLE_SECONDS; closing one rebuilds its
report, so a sweep can take long (issue 26: after ~21,000 OTLP-made traces went idle, the
request that happened to sweep took 90.5 s). It runs every minute on the queue's workers
(`sweep_idle_every_minute`), and creating or opening a live trace asks for one more
(`request_sweep`), at most every SWEEP_EVERY seconds per process so a flood of requests
queues one sweep, not thousands. With the queue in immediate mode (tests) each request
sweeps at once, inline, as before.
"""

from __future__ import annotations

import threading
import time

from huey import crontab
from huey.contrib.djhuey import HUEY, db_periodic_task, db_task

from traces.stores import store
from traces.taskqueue import enqueue as queue

SWEEP_EVERY = 10.0


class SweepRequests:
    """When this process last queued a sweep."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = float("-inf")

    def due(self, now: float) -> bool:
        with self._lock:
            if now - self._last < SWEEP_EVERY:
                return False
            self._last = now
            return True

    def clear(self) -> None:
        with self._lock:
            self._last = float("-inf")


def request_sweep() -> None:
    """Queue a sweep of idle live traces, unless this process queued one just now."""
    if HUEY.immediate or store(SweepRequests).due(time.monotonic()):
        queue.enqueue(sweep_idle_task)


@db_task()
def sweep_idle_task() -> None:
    from traces.live.writes import sweep_idle

    sweep_idle()


@db_periodic_task(crontab(minute="*"))
def sweep_idle_every_minute() -> None:
    """Every minute, on the queue's workers: close the live traces that went idle."""
    from traces.live.writes import sweep_idle

    sweep_idle()
