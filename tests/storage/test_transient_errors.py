"""A deadlock or a held lock fails nothing for good: the store is tried again (issue 26).

Issue 26 saw a blob-upsert deadlock under load fail a background upload with no retry.
These tests make the real thing happen on the database the suite runs on: on SQLite a
second connection holds the write lock past our busy timeout ("database is locked"); on
PostgreSQL two sessions take two rows in opposite orders and the server aborts ours
(SQLSTATE 40P01). Each time the work must succeed on a later try, once.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time

import pytest
from django.db import connection, transaction

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.services.upload import trace_upload
from traces.storage.transient import is_transient, retrying

pytestmark = pytest.mark.django_db(transaction=True)


class _FirstRetry(logging.Handler):
    """Set when the retry loop says it will try again (our first try has failed)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if "trying again" in record.getMessage():
            self.seen.set()


def _hold_sqlite_write_lock(until: threading.Event) -> threading.Thread:
    """Another connection takes SQLite's write lock now and keeps it until `until` is set
    (at most 20 s), so our first try surely meets it, whatever the machine's speed."""
    holder = sqlite3.connect(
        connection.settings_dict["NAME"], isolation_level=None, check_same_thread=False
    )
    holder.execute("BEGIN IMMEDIATE")

    def release() -> None:
        until.wait(20)
        holder.execute("ROLLBACK")
        holder.close()

    thread = threading.Thread(target=release)
    thread.start()
    return thread


def test_an_upload_meeting_a_locked_database_is_stored_on_a_later_try(caplog):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write lock; PostgreSQL's deadlock is the next test")
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout = 50")  # this connection gives up at once
    caplog.set_level(logging.WARNING, logger="traces.storage.transient")
    first_retry = _FirstRetry()
    logging.getLogger("traces.storage.transient").addHandler(first_retry)
    releaser = _hold_sqlite_write_lock(first_retry.seen)
    try:
        result = trace_upload(files=[("run.jsonl", ndjson(agent_lines(3)))], name="locked run")
    finally:
        first_retry.seen.set()
        releaser.join()
        logging.getLogger("traces.storage.transient").removeHandler(first_retry)
    assert models.Trace.objects.filter(pk=result.trace.pk, calls__isnull=False).exists()
    assert models.Trace.objects.count() == 1
    tries = [r for r in caplog.records if "trying again" in r.getMessage()]
    assert tries and "database is locked" in tries[0].getMessage()


def test_a_deadlock_is_tried_again_and_the_work_done_once(caplog):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL detects deadlocks; SQLite has one writer at a time")
    import psycopg

    first = models.Project.objects.create(slug="first", name="first")
    second = models.Project.objects.create(slug="second", name="second")
    settings = connection.settings_dict
    other = psycopg.connect(
        host=settings["HOST"] or "127.0.0.1",
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        dbname=settings["NAME"],
        autocommit=False,
    )
    # The other session detects deadlocks late, so the server aborts ours.
    other.execute("SET deadlock_timeout = '5s'")
    table = models.Project._meta.db_table
    ours_has_first = threading.Event()

    def the_other_session() -> None:
        other.execute(f"UPDATE {table} SET name = 'b' WHERE id = %s", [second.pk])
        ours_has_first.wait(5)
        other.execute(f"UPDATE {table} SET name = 'a' WHERE id = %s", [first.pk])
        other.commit()

    tries = []

    def work() -> None:
        tries.append(1)
        with transaction.atomic():
            models.Project.objects.filter(pk=first.pk).update(name="ours")
            ours_has_first.set()
            time.sleep(0.2)
            models.Project.objects.filter(pk=second.pk).update(name="ours")

    caplog.set_level(logging.WARNING, logger="traces.storage.transient")
    thread = threading.Thread(target=the_other_session)
    thread.start()
    try:
        retrying(work, what="deadlock test")
    finally:
        thread.join()
        other.close()
    assert len(tries) == 2
    assert set(
        models.Project.objects.filter(slug__in=["first", "second"]).values_list("name", flat=True)
    ) == {"ours"}
    assert any("deadlock" in r.getMessage() for r in caplog.records)


def test_errors_of_the_input_are_not_tried_again():
    calls = []

    def work() -> None:
        calls.append(1)
        models.Project.objects.create(slug="dup", name="a")
        models.Project.objects.create(slug="dup", name="b")  # unique: IntegrityError

    with pytest.raises(Exception) as raised:
        retrying(lambda: transaction.atomic()(work)(), what="integrity")
    assert len(calls) == 1 and not is_transient(raised.value)
