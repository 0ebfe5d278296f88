"""`manage.py tail`: follow a log while it grows, is truncated and is rotated."""

from __future__ import annotations

import io
import os
import threading

import pytest
from django.core.management import call_command

from tests.live.events import agent_lines, ndjson
from traces import live, models
from traces.selectors.traces import trace_source_bytes

pytestmark = pytest.mark.django_db(transaction=True)


class Progress:
    """Lines the tail command has had stored so far, to pace the writer thread."""

    def __init__(self, monkeypatch) -> None:
        self.total = 0
        self.changed = threading.Condition()
        real_append = live.append_lines

        def counting_append(**kwargs):
            result = real_append(**kwargs)
            with self.changed:
                self.total = result.total
                self.changed.notify_all()
            return result

        monkeypatch.setattr(live, "append_lines", counting_append)

    def wait_for(self, total: int, timeout: float = 15.0) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.total >= total, timeout), (
                f"tail stored {self.total} lines, expected {total}"
            )


def run_tail(*args: str) -> tuple[models.Trace, str]:
    out = io.StringIO()
    call_command("tail", *args, "--poll", "0.05", stdout=out)
    trace = models.Trace.objects.order_by("-created_at").first()
    return trace, out.getvalue()


def test_tail_follows_appends_truncation_and_rotation(tmp_path, monkeypatch):
    lines = agent_lines(4)  # 15 lines: 4 calls, 3 tool runs
    assert len(lines) == 15
    log = tmp_path / "agent.jsonl"
    log.write_bytes(ndjson(lines[:5]))
    progress = Progress(monkeypatch)
    failures: list[BaseException] = []

    def agent() -> None:
        try:
            progress.wait_for(5)
            with open(log, "ab") as out:  # appends, one of them splitting a line in two
                out.write(ndjson(lines[5:7]) + lines[7][:20])
                out.flush()
                progress.wait_for(7)
                out.write(lines[7][20:] + b"\n" + ndjson(lines[8:9]))
            progress.wait_for(9)
            log.write_bytes(ndjson(lines[9:11]))  # truncated and rewritten, shorter
            progress.wait_for(11)
            os.rename(log, tmp_path / "agent.jsonl.1")  # rotated: a new file takes the name
            log.write_bytes(ndjson(lines[11:]))
            progress.wait_for(15)
        except BaseException as exc:  # reported by the test thread
            failures.append(exc)

    writer = threading.Thread(target=agent)
    writer.start()
    trace, output = run_tail(str(log), "--idle-exit", "1.5", "--name", "followed")
    writer.join(20)
    assert not failures, failures
    assert trace.name == "followed"
    assert trace.state == "closed"
    assert trace.lines_total == 15
    assert trace.calls_count == 4
    assert list(trace.tool_runs.values_list("status", flat=True)) == ["paired"] * 3
    assert trace.line_errors_count == 0
    # Every line once, in order, byte for byte, across truncation and rotation.
    assert trace_source_bytes(trace=trace) == ndjson(lines)
    assert f"/traces/{trace.pk}/" in output
    assert "closed: 15 lines, 4 calls" in output
    assert "2 restart(s)" in output


def test_tail_from_end_skips_what_is_already_there(tmp_path, monkeypatch):
    lines = agent_lines(2)
    log = tmp_path / "agent.jsonl"
    log.write_bytes(b'{"type": "old line"}\n')
    progress = Progress(monkeypatch)

    def agent() -> None:
        with open(log, "ab") as out:
            out.write(ndjson(lines))
        progress.wait_for(len(lines))

    # The follower opens the file before the agent writes: start the writer after it.
    real_init = live.create_live_trace

    def create_then_write(**kwargs):
        trace = real_init(**kwargs)
        threading.Timer(0.3, agent).start()
        return trace

    monkeypatch.setattr(live, "create_live_trace", create_then_write)
    trace, _ = run_tail(str(log), "--from-end", "--idle-exit", "1.5")
    assert trace_source_bytes(trace=trace) == ndjson(lines)
    assert trace.calls_count == 2


def test_tail_keeps_an_unfinished_last_line_and_stops_on_a_foreign_file(tmp_path):
    lines = agent_lines(1)
    log = tmp_path / "agent.jsonl"
    log.write_bytes(ndjson(lines) + lines[0][:10])  # the agent died mid-line
    trace, _ = run_tail(str(log), "--idle-exit", "0.3")
    assert trace.lines_total == len(lines) + 1
    assert list(trace.line_errors.values_list("line", flat=True)) == [len(lines) + 1]
    foreign = tmp_path / "notes.jsonl"
    foreign.write_bytes(b'{"hello": "world"}\n')
    with pytest.raises(Exception, match="No supported trace format"):
        run_tail(str(foreign), "--idle-exit", "0.3")
    refused = models.Trace.objects.order_by("-created_at").first()
    assert (refused.state, refused.lines_total) == ("closed", 0)
