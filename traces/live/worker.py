"""Live report refreshes as queue tasks, coalesced through a database row.

After each append commits, `request_refresh` queues at most one refresh per trace (the
`LiveRefresh` row's `scheduled_at` is claimed with a conditional UPDATE); the task
claims `running_since` the same way, so a trace is never refreshed by two workers at
once, whichever process or machine they run on. A busy trace is refreshed at most every
max(LIVE_REPORT_INTERVAL, REPORT_DUTY x its last refresh time), and always once after
its last batch: a refresh that ends with lines still uncovered queues the next one.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from huey.contrib.djhuey import db_task

from traces import models
from traces.conf import inspector_settings
from traces.live.reports import needs_report, refresh_report
from traces.stores import store
from traces.taskqueue import enqueue as queue

log = logging.getLogger(__name__)

REPORT_DUTY = 4
"""A busy trace's report is rebuilt at most every REPORT_DUTY x the last rebuild's time,
so that it takes at most a fifth of a worker."""

LOST_AFTER = timedelta(seconds=120)
"""A queued refresh that has not started this long after it was due, or one running this
long, was lost with its worker: another may be queued or started."""


class QueuedRefreshes:
    """Trace id -> when the refresh this process queued is due: until then it has not
    started, so it will cover any line committed now (no need to ask the database)."""

    def __init__(self) -> None:
        self.due: dict[str, float] = {}

    def clear(self) -> None:
        self.due.clear()


def request_refresh(trace_id: Any) -> None:
    """Queue a refresh of the trace's report unless one is queued already."""
    key = str(trace_id)
    queued_until = store(QueuedRefreshes).due
    if time.time() < queued_until.get(key, 0.0):
        return
    now = timezone.now()
    rows = models.LiveRefresh.objects.filter(pk=trace_id)
    if not rows.exists():  # another process may create it at the same moment
        models.LiveRefresh.objects.bulk_create(
            [models.LiveRefresh(trace_id=trace_id)], ignore_conflicts=True
        )
    state = rows.values("not_before").first()
    if state is None:  # the trace was deleted meanwhile
        return
    due = max(now, state["not_before"] or now)
    free = Q(scheduled_at__isnull=True) | Q(scheduled_at__lt=now - LOST_AFTER)
    if not rows.filter(free).update(scheduled_at=due):
        return  # one is queued: it will cover these lines too
    delay = 0.0 if queue.immediate() else (due - now).total_seconds()
    queue.enqueue(refresh_live_report, str(trace_id), delay=delay)
    if delay > 0.1:
        if len(queued_until) > 10_000:
            queued_until.clear()
        queued_until[key] = time.time() + delay - 0.05


def request_refresh_of_new(trace_id: Any) -> None:
    """`request_refresh` for a trace inserted in the current transaction: no other writer
    can see it yet, so its refresh row is created already claimed, with the append's
    writes, and the task is queued on commit (no query after the commit)."""
    models.LiveRefresh.objects.create(trace_id=trace_id, scheduled_at=timezone.now())
    key = str(trace_id)
    transaction.on_commit(lambda: queue.enqueue(refresh_live_report, key))


@db_task()
def refresh_live_report(trace_id: str) -> None:
    run_refresh(trace_id)


def run_refresh(trace_id: str) -> bool:
    """Refresh the report if no one else is; queue the next one if lines remain."""
    now = timezone.now()
    rows = models.LiveRefresh.objects.filter(pk=trace_id)
    free = Q(running_since__isnull=True) | Q(running_since__lt=now - LOST_AFTER)
    if not rows.filter(free).update(running_since=now, scheduled_at=None):
        rows.update(scheduled_at=None)  # the running one queues the next when it ends
        return False
    started = time.monotonic()
    refreshed = False
    failed = False
    try:
        refreshed = refresh_report(trace_id)
    except Exception:
        failed = True
        log.exception("live report refresh failed for trace %s", trace_id)
    finally:
        spent = time.monotonic() - started
        gap = max(float(inspector_settings()["LIVE_REPORT_INTERVAL"]), REPORT_DUTY * spent)
        rows.update(running_since=None, not_before=timezone.now() + timedelta(seconds=gap))
    if refreshed and not failed and needs_report(trace_id):
        request_refresh(trace_id)
    return refreshed


def wait_for_reports(timeout: float = 30.0) -> bool:
    """Block until no refresh is queued or running (tests, benchmarks, shutdown); in
    immediate mode each ran inside the append that asked for it."""
    if queue.immediate():
        return True
    deadline = time.monotonic() + timeout
    busy = Q(scheduled_at__isnull=False) | Q(running_since__isnull=False)
    while models.LiveRefresh.objects.filter(busy).exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
