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

from traces.stores import store


def immediate() -> bool:
    return bool(HUEY.immediate)


def embedded() -> bool:
    return getattr(settings, "INSPECTOR_QUEUE", "embedded") == "embedded" and not HUEY.immediate


def enqueue(task: TaskWrapper, *args: Any, delay: float = 0.0) -> None:
    """Queue `task(*args)`, to run after `delay` seconds (at once in immediate mode)."""
    if embedded():
        store(EmbeddedConsumer).ensure()
    if delay > 0 and not HUEY.immediate:
        task.schedule(args, delay=delay)
    else:
        task(*args)


def start_embedded() -> None:
    """Start the embedded consumer now rather than on the first task: a process that
    starts has work a killed one left (traces.capture.otlp_queue's recovery)."""
    if embedded():
        store(EmbeddedConsumer).ensure()


class EmbeddedConsumer:
    """Huey's consumer threads in this process (the embedded mode), started once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._consumer: Any = None

    def ensure(self) -> None:
        """Start Huey's scheduler and worker threads in this process, once. Huey's own
        `Consumer.start` also installs signal handlers, which only the main thread may do
        and which belong to the server here, so its threads are started directly."""
        with self._lock:
            if self._consumer is not None:
                return
            self._consumer = _started_consumer()

    def clear(self) -> None:
        """Stop the threads, once their tasks are done (the next task starts new ones).
        Stopped outside the lock: a task that queues another while it ends starts them."""
        with self._lock:
            consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.stop_flag.set()
            wake_all = getattr(HUEY.storage, "wake_all", None)
            if wake_all is not None:  # workers waiting for a task see the flag now
                wake_all()
            consumer.stop(graceful=True)


def _started_consumer() -> Any:
    consumer = HUEY.create_consumer(
        workers=2,
        worker_type="thread",
        periodic=True,  # the sweep of jobs whose worker died (traces.services.jobs)
        initial_delay=0.05,
        backoff=1.15,
        # Only after an error reading the queue: an idle worker waits for a task to be
        # queued, woken by it (traces.taskqueue.wake)
        max_delay=0.1,
        check_worker_health=False,
    )
    consumer.scheduler.start()
    for _, worker in consumer.worker_threads:
        worker.start()
    return consumer


def pending() -> int:
    """Tasks waiting in the queue or its schedule (0 in immediate mode)."""
    if HUEY.immediate:
        return 0
    return HUEY.pending_count() + HUEY.scheduled_count()
