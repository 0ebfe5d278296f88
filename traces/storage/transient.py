"""Database errors worth a second try, and the one loop that gives it.

Under load two ingests that share blobs can deadlock (PostgreSQL aborts one of them:
SQLSTATE 40P01), a serializable read can be refused (40001), a lock wait can time out
(55P03), SQLite can stay locked past its busy timeout, and a pooled connection can be
dropped by a restarting server. Each of these says nothing about the input: the same
work, done again a moment later, succeeds. Issue 26 found a background upload failed for
good by one deadlock; `retrying` gives such work a few more tries, waiting a little longer
each time, and lets every other error through at once.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections
from django.db import connection as default_connection

log = logging.getLogger(__name__)

T = TypeVar("T")

TRANSIENT_SQLSTATES = frozenset(
    {
        "40P01",  # deadlock_detected
        "40001",  # serialization_failure
        "55P03",  # lock_not_available (lock_timeout)
        "57P01",  # admin_shutdown (a server restart)
        "08000",  # connection_exception
        "08003",  # connection_does_not_exist
        "08006",  # connection_failure
    }
)
SQLITE_TRANSIENT = ("database is locked", "database table is locked")

ATTEMPTS = 4
FIRST_WAIT = 0.2
"""Seconds before the second try; doubled for each later one, with jitter."""


def is_transient(error: BaseException) -> bool:
    """Whether a database error would likely not happen again on a second try."""
    if not isinstance(error, DatabaseError):
        return False
    cause = error.__cause__ or error.__context__
    if getattr(cause, "sqlstate", None) in TRANSIENT_SQLSTATES:
        return True
    if isinstance(error, OperationalError):
        text = str(error).lower()
        if any(marker in text for marker in SQLITE_TRANSIENT):
            return True
    return isinstance(error, InterfaceError) and "closed" in str(error).lower()


def retrying(work: Callable[[], T], *, what: str, attempts: int = ATTEMPTS) -> T:
    """`work()`, tried again after a transient database error, up to `attempts` times.

    `work` must be all-or-nothing (one `transaction.atomic()`), so a failed try leaves no
    trace. Between tries, outside any transaction, a broken connection is replaced;
    inside one (a caller's own atomic block) the try's savepoint was rolled back."""
    wait = FIRST_WAIT
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except DatabaseError as error:
            if attempt == attempts or not is_transient(error):
                raise
            log.warning("%s: %s (try %d of %d); trying again", what, error, attempt, attempts)
            time.sleep(wait * (1 + random.random() / 2))
            wait *= 2
            if not default_connection.in_atomic_block:
                close_old_connections()
    raise AssertionError("unreachable")
