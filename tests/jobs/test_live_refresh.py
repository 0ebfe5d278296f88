"""Live report refreshes on the queue: coalesced through the LiveRefresh row, never two at once.

The first tests run tasks inline (Huey's immediate mode, tests/conftest.py); the last one
runs the embedded default: Huey's consumer threads in this process on its memory queue.
"""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from huey.contrib.djhuey import HUEY

from tests.live.events import agent_lines
from traces import live, models
from traces.live import worker
from traces.taskqueue import enqueue as queue

pytestmark = pytest.mark.django_db(transaction=True)


def refreshes(trace) -> int:
    """Report refreshes stored for a live trace: each ends with a `state` event."""
    return models.LiveEvent.objects.filter(trace=trace, type="state").count()


def test_each_append_refreshes_the_report_once_done():
    lines = agent_lines(4)
    trace = live.create_live_trace(name="inline")
    live.append_lines(trace_id=trace.pk, offset=0, lines=lines[:5])
    trace.refresh_from_db()
    assert trace.report_lines == trace.lines_total == 5
    row = models.LiveRefresh.objects.get(pk=trace.pk)
    assert row.scheduled_at is None and row.running_since is None
    assert row.not_before > timezone.now()  # the next one waits LIVE_REPORT_INTERVAL


def test_a_trace_is_never_refreshed_by_two_workers_at_once():
    lines = agent_lines(4)
    trace = live.create_live_trace(name="busy")
    live.append_lines(trace_id=trace.pk, offset=0, lines=lines[:5])
    before = refreshes(trace)
    # Another worker (any process, any machine) is refreshing this trace right now.
    models.LiveRefresh.objects.filter(pk=trace.pk).update(running_since=timezone.now())
    live.append_lines(trace_id=trace.pk, offset=5, lines=lines[5:])
    trace.refresh_from_db()
    assert trace.report_lines == 5 < trace.lines_total  # this one did not start a second
    assert refreshes(trace) == before
    assert not worker.run_refresh(str(trace.pk))
    # When it ends it frees the row; the lines it did not cover are refreshed then.
    models.LiveRefresh.objects.filter(pk=trace.pk).update(running_since=None)
    worker.request_refresh(trace.pk)
    trace.refresh_from_db()
    assert trace.report_lines == trace.lines_total == len(lines)
    assert refreshes(trace) == before + 1


def test_a_refresh_lost_with_its_worker_does_not_block_the_trace():
    lines = agent_lines(3)
    trace = live.create_live_trace(name="lost")
    live.append_lines(trace_id=trace.pk, offset=0, lines=lines[:3])
    long_ago = timezone.now() - worker.LOST_AFTER * 2
    models.LiveRefresh.objects.filter(pk=trace.pk).update(
        running_since=long_ago, scheduled_at=long_ago
    )
    live.append_lines(trace_id=trace.pk, offset=3, lines=lines[3:])
    trace.refresh_from_db()
    assert trace.report_lines == trace.lines_total


@pytest.mark.skipif(
    settings.INSPECTOR_QUEUE != "embedded",
    reason="the embedded queue is the default without REDIS_URL; this run queues to Redis",
)
def test_the_embedded_queue_refreshes_a_busy_trace_in_this_process_coalesced():
    """Huey's own consumer threads, started in this process on the first task: 31 quick
    batches are covered by fewer refreshes, the last one after the last batch."""
    lines = agent_lines(31)
    HUEY.immediate = False
    try:
        assert queue.embedded()
        with override_settings(INSPECTOR={"LIVE_REPORT_INTERVAL": 0.3}):
            trace = live.create_live_trace(name="embedded")
            started = time.monotonic()
            sent = 0
            while sent < len(lines):
                batch = lines[sent : sent + 4]
                live.append_lines(trace_id=trace.pk, offset=sent, lines=batch)
                sent += len(batch)
                time.sleep(0.02)
            assert live.wait_for_reports(30)
            elapsed = time.monotonic() - started
    finally:
        HUEY.immediate = True
    trace.refresh_from_db()
    assert trace.report_lines == trace.lines_total == len(lines)
    batches = (len(lines) + 3) // 4
    count = refreshes(trace)
    assert 1 <= count < batches
    assert count <= elapsed / 0.3 + 2
