"""The embedded queue's storage wakes an idle worker when a task is queued, instead of
the worker polling (traces.taskqueue.wake)."""

from __future__ import annotations

import threading
import time

from huey import RedisHuey
from huey.contrib.djhuey import HUEY

from traces.taskqueue import wake as queue_wake
from traces.taskqueue.wake import WakingMemoryHuey, WakingMemoryStorage


def waiting_dequeue(storage: WakingMemoryStorage) -> tuple[threading.Thread, dict]:
    got: dict = {}

    def worker() -> None:
        started = time.monotonic()
        got["data"] = storage.dequeue()
        got["waited"] = time.monotonic() - started

    thread = threading.Thread(target=worker)
    thread.start()
    time.sleep(0.05)  # the worker is waiting now
    return thread, got


def test_a_waiting_worker_gets_a_task_as_soon_as_it_is_queued(monkeypatch):
    monkeypatch.setattr(queue_wake, "WAIT_SECONDS", 5.0)
    storage = WakingMemoryStorage("test")
    thread, got = waiting_dequeue(storage)
    storage.enqueue(b"task")
    thread.join(timeout=5)
    assert got["data"] == b"task"
    assert got["waited"] < 1.0  # woken by the enqueue, not by the end of its wait


def test_an_idle_worker_looks_again_after_its_wait_or_when_woken(monkeypatch):
    monkeypatch.setattr(queue_wake, "WAIT_SECONDS", 0.2)
    storage = WakingMemoryStorage("test")
    started = time.monotonic()
    assert storage.dequeue() is None  # nothing queued: back after WAIT_SECONDS
    assert 0.15 <= time.monotonic() - started < 2.0
    monkeypatch.setattr(queue_wake, "WAIT_SECONDS", 5.0)
    thread, got = waiting_dequeue(storage)
    storage.wake_all()  # a consumer stopping
    thread.join(timeout=5)
    assert got["data"] is None and got["waited"] < 1.0


def test_tasks_come_out_in_the_order_they_were_queued_and_huey_does_not_poll():
    storage = WakingMemoryStorage("test")
    for n in range(3):
        storage.enqueue(f"t{n}".encode())
    assert [storage.dequeue() for _ in range(3)] == [b"t0", b"t1", b"t2"]
    assert storage.blocking  # Huey's worker skips its sleep between looks
    assert isinstance(WakingMemoryHuey("test").storage, WakingMemoryStorage)


def test_the_settings_name_the_waking_huey_unless_the_queue_is_redis(settings):
    """Huey's Redis storage blocks already (BRPOP); every other queue is in memory."""
    if settings.INSPECTOR_QUEUE == "redis":
        assert isinstance(HUEY, RedisHuey)  # its storage blocks by default
    else:
        assert isinstance(HUEY, WakingMemoryHuey)
