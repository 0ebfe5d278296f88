"""Database connections around work done outside Django's request cycle.

Django closes stale connections before and after each request it serves. Work run on a
thread of our own (the proxy's fast path, recordings, OTLP stores) must do the same: with
PostgreSQL's connection pool a thread that kept its connection would hold one of the
pool's few for good.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import close_old_connections


@contextmanager
def connection_scope() -> Iterator[None]:
    """Stale connections closed before; the one used given back after, even on error."""
    close_old_connections()
    try:
        yield
    finally:
        close_old_connections()
