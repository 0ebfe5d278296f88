"""Read-only database work of async code, on the event loop's thread pool.

Every thread-sensitive call (`database_sync_to_async`'s default) made outside a request
runs on one thread per process, the one every websocket of the process shares: under
load a viewer's handshake waited there behind every other socket's work, past daphne's
5 s handshake timeout (issue 26, bench/load.py). Read-only work needs no particular
thread, so it runs on the loop's pool instead.

A pool thread runs any caller's work next, so it keeps no connection between calls: each
call closes every connection it opened (with PostgreSQL's pool, gives it back). Closing
only the stale ones (`close_old_connections`, as `database_sync_to_async` does) left one
checked out per call in the tests, until the pool had none to give.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from channels.db import database_sync_to_async
from django.db import connections


def pool_read(function: Callable[..., Any]) -> Any:
    """`function` (read-only database work) as a coroutine function run on a thread of the
    event loop's pool, every connection of that thread closed when it returns."""

    @wraps(function)
    def closing(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        finally:
            connections.close_all()

    return database_sync_to_async(closing, thread_sensitive=False)
