"""Ingest work runs in a small pool of its own threads: bounded concurrency, off the event loop.

Parsing and rebuilding an upload is CPU-bound and can take seconds and gigabytes; the
pool (INSPECTOR["INGEST_WORKERS"], default 2) bounds how many run at once (the others
wait their turn) and keeps that work out of the event loop and out of the threads that
serve pages. The work handed here never touches the database: views store its result
afterwards through Django's own thread-sensitive `sync_to_async`.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from traces.conf import inspector_settings
from traces.stores import store

T = TypeVar("T")


class IngestPool:
    """The ingest threads of this process, started on the first upload."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                workers = max(1, int(inspector_settings()["INGEST_WORKERS"]))
                self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest")
            return self._pool

    def clear(self) -> None:
        """Let the threads go once their work is done (the next upload starts new ones,
        sized by the settings of then)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)


def ingest_pool() -> ThreadPoolExecutor:
    return store(IngestPool).executor()


async def off_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run `function(*args, **kwargs)` in the ingest pool and await its result."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(ingest_pool(), functools.partial(function, *args, **kwargs))
