"""The task queue (Huey): where background work goes; the embedded consumer runs it in-process.

Three modes (settings.INSPECTOR_QUEUE): "redis" queues tasks in Redis for
`manage.py run_huey` workers on any machine; "embedded" (the default without Redis)
keeps an in-memory queue and runs Huey's own consumer threads inside this process,
started on the first task, so `make serve` needs nothing else running; "immediate"
runs each task inline as it is queued (the test suite sets it explicitly).
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from huey.api import TaskWrapper
from huey.contrib.djhuey import HUEY

_lock = threading.Lock()
_consumer: Any = None


def immediate() -> bool:
    return bool(HUEY.immediate)


def embedded() -> bool:
    return getattr(settings, "INSPECTOR_QUEUE", "embedded") == "embedded" and not HUEY.immediate


def enqueue(task: TaskWrapper, *args: Any, delay: float = 0.0) -> None:
    """Queue `task(*args)`, to run after `delay` seconds (at once in immediate mode)."""
    if embedded():
        _ensure_consumer()
    if delay > 0 and not HUEY.immediate:
        task.schedule(args, delay=delay)
    else:
        task(*args)


def _ensure_consumer() -> None:
    """Start Huey's scheduler and worker threads in this process, once. Huey's own
    `Consumer.start` also installs signal handlers, which only the main thread may do and
    which belong to the server here, so its threads are started directly."""
    global _consumer
    with _lock:
        if _consumer is not None:
            return
        consumer = HUEY.create_consumer(
            workers=2,
            worker_type="thread",
            periodic=True,  # the sweep of jobs whose worker died (traces.services.jobs)
            initial_delay=0.05,
            backoff=1.15,
            max_delay=0.5,
            check_worker_health=False,
        )
        consumer.scheduler.start()
        for _, worker in consumer.worker_threads:
            worker.start()
        _consumer = consumer


def pending() -> int:
    """Tasks waiting in the queue or its schedule (0 in immediate mode)."""
    if HUEY.immediate:
        return 0
    return HUEY.pending_count() + HUEY.scheduled_count()
