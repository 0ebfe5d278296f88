"""Ingest work runs in a small pool of its own threads: bounded concurrency, off the event loop.

Parsing and rebuilding an upload is CPU-bound and can take seconds and gigabytes; the
pool (INSPECTOR["INGEST_WORKERS"], default 2) bounds how many run at once (the others
wait their turn) and keeps that work out of the event loop and out of the threads that
serve pages. The work handed here does not touch the database: views store its result
afterwards through Django's own thread-sensitive `sync_to_async`. The one exception is
the OTLP receiver (traces.capture.otlp), whose few queries and one insert an export
follow its decoding on the same thread, in a `connection_scope`, rather than hop.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from traces.conf import inspector_settings
from traces.stores import ThreadPoolStore, store

T = TypeVar("T")


class IngestPool(ThreadPoolStore):
    """The ingest threads of this process, started on the first upload."""

    thread_name = "ingest"

    def workers(self) -> int:
        return int(inspector_settings()["INGEST_WORKERS"])


def ingest_pool() -> ThreadPoolExecutor:
    return store(IngestPool).executor()


async def off_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run `function(*args, **kwargs)` in the ingest pool and await its result."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(ingest_pool(), functools.partial(function, *args, **kwargs))
