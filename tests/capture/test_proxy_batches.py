"""The proxy records a session's lines in order, one writer per session: lines that end
while it is busy go in its next batch, and a batch that fails is retried line by line."""

from __future__ import annotations

import asyncio
import threading

from traces.capture import lines as lines_module
from traces.capture.recording import RecordingQueue, schedule_recording
from traces.stores import store


def run_schedules(monkeypatch, lines: list[bytes], fail_on: bytes | None = None) -> list[list]:
    batches: list[list[bytes]] = []
    first_started = threading.Event()
    release_first = threading.Event()

    def record(**kwargs):
        batch = list(kwargs["lines"])
        if not batches:
            first_started.set()
            release_first.wait(5)
        batches.append(batch)
        if fail_on is not None and fail_on in batch and len(batch) > 1:
            raise ValueError("one bad line")

    monkeypatch.setattr(lines_module, "record_lines_on_thread", record)

    async def scenario():
        schedule_recording("anthropic-messages", "batches", lines[0])
        await asyncio.get_running_loop().run_in_executor(None, first_started.wait, 5)
        for line in lines[1:]:  # these end while the first is being stored
            schedule_recording("anthropic-messages", "batches", line)
        release_first.set()
        queue = store(RecordingQueue)
        while queue.writers():
            await asyncio.gather(*queue.writers())

    asyncio.run(scenario())
    return batches


def test_lines_that_end_while_the_writer_is_busy_share_one_append(monkeypatch):
    lines = [b"1", b"2", b"3", b"4"]
    assert run_schedules(monkeypatch, lines) == [[b"1"], [b"2", b"3", b"4"]]


def test_a_failing_batch_is_retried_line_by_line(monkeypatch):
    lines = [b"1", b"2", b"bad", b"4"]
    batches = run_schedules(monkeypatch, lines, fail_on=b"bad")
    assert batches == [[b"1"], [b"2", b"bad", b"4"], [b"2"], [b"bad"], [b"4"]]


def test_a_line_given_as_a_callable_is_made_on_the_writer_thread(monkeypatch):
    """The HTTP relay hands over the finished exchange's `line` method: the JSON work of
    masking and decoding runs on the writer's thread, never on the event loop."""
    made_on: list[str] = []

    def line() -> bytes:
        made_on.append(threading.current_thread().name)
        return b"made"

    loop_thread = threading.current_thread().name
    batches = run_schedules(monkeypatch, [b"1", line, b"3"])  # type: ignore[list-item]
    assert batches == [[b"1"], [b"made", b"3"]]
    assert made_on and made_on[0] != loop_thread


def test_a_line_that_cannot_be_made_loses_no_other(monkeypatch, caplog):
    def broken() -> bytes:
        raise ValueError("a body the recorder cannot read")

    batches = run_schedules(monkeypatch, [b"1", b"2", broken, b"4"])  # type: ignore[list-item]
    assert batches == [[b"1"], [b"2", b"4"]]
    assert "could not record a proxied call in session batches" in caplog.text
