"""The standard-library recorder in clients/, against a running server (live_server)."""

from __future__ import annotations

import importlib.util
import json
import threading

import pytest

from tests.live.events import MODEL, TOOLS
from tests.live.servers import ROOT, free_port
from traces import models
from traces.selectors.traces import trace_source_bytes

pytestmark = pytest.mark.django_db(transaction=True)


def load_recorder():
    spec = importlib.util.spec_from_file_location(
        "loop_inspector_recorder", ROOT / "clients" / "loop_inspector_recorder.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


recorder_module = load_recorder()


def run_agent(recorder, calls: int) -> None:
    """A scripted agent loop (no model): each call asks for one tool, the last answers."""
    messages = [{"role": "user", "content": "Find three facts."}]
    for index in range(1, calls + 1):
        body = {"model": MODEL, "max_tokens": 256, "tools": TOOLS, "messages": list(messages)}
        call_id = recorder.request(body)
        last = index == calls
        content = [{"type": "text", "text": f"Step {index}."}]
        if not last:
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{index}",
                    "name": "search",
                    "input": {"q": str(index)},
                }
            )
        reply = {"id": f"msg_{index}", "type": "message", "role": "assistant", "model": MODEL,
                 "content": content, "stop_reason": "end_turn" if last else "tool_use",
                 "usage": {"input_tokens": 50 * index, "output_tokens": 10}}  # fmt: skip
        recorder.response(call_id, body=reply)
        if last:
            return
        recorder.tool_start(f"toolu_{index}", "search")
        recorder.tool_end(f"toolu_{index}", "search", is_error=False)
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{index}", "content": "a fact"}]})  # fmt: skip


def test_the_recorder_writes_a_file_and_feeds_a_live_trace(live_server, tmp_path):
    path = tmp_path / "events.jsonl"
    recorder = recorder_module.EventRecorder(
        path, agent="scripted", url=live_server.url, name="recorded", flush_interval=0.05
    )
    assert recorder.trace_url.startswith(live_server.url)
    run_agent(recorder, 4)
    assert recorder.flush(10)
    trace = models.Trace.objects.get(pk=recorder.trace_id)
    assert (trace.state, trace.calls_count) == ("live", 4)
    recorder.close()
    trace.refresh_from_db()
    assert trace.state == "closed"
    assert trace.name == "recorded"
    assert trace.format == "loop-inspector"
    assert list(trace.tool_runs.values_list("status", flat=True)) == ["paired"] * 3
    written = path.read_bytes()
    assert trace_source_bytes(trace=trace) == written
    first = json.loads(written.splitlines()[0])
    assert first == {
        "type": "meta",
        "format": "loop-inspector/events/v1",
        "provider": "anthropic",
        "agent": "scripted",
    }


def test_a_lost_acknowledgement_is_resent_from_the_acknowledged_offset(
    live_server, monkeypatch, tmp_path
):
    real_post = recorder_module.LiveSender._post
    lost = threading.Event()
    posted_offsets: list[str] = []

    def flaky_post(self, path, body):
        reply = real_post(self, path, body)  # the server stores the batch...
        if "/lines" in path:
            posted_offsets.append(path.rsplit("=", 1)[1])
            if not lost.is_set():
                lost.set()
                raise ConnectionResetError(
                    "connection reset before the reply"
                )  # ...the reply is lost
        return reply

    monkeypatch.setattr(recorder_module.LiveSender, "_post", flaky_post)
    path = tmp_path / "events.jsonl"
    recorder = recorder_module.EventRecorder(path, url=live_server.url, flush_interval=0.05)
    run_agent(recorder, 3)
    assert recorder.flush(20)
    recorder.close()
    trace = models.Trace.objects.get(pk=recorder.trace_id)
    assert lost.is_set()
    assert posted_offsets[0] == posted_offsets[1] == "0"  # sent again from offset 0
    # Every line stored once, in order: the bytes are the file's.
    assert trace.lines_total == 1 + 4 + 4 + 2  # meta, two tool-asking calls, the last call
    assert trace_source_bytes(trace=trace) == path.read_bytes()
    assert trace.calls_count == 3


def test_an_unreachable_server_never_breaks_the_agent(tmp_path, capsys):
    path = tmp_path / "events.jsonl"
    recorder = recorder_module.EventRecorder(
        path, url=f"http://127.0.0.1:{free_port()}", timeout=0.5, flush_interval=0.05
    )
    run_agent(recorder, 2)
    assert recorder.trace_url is None
    assert not recorder.flush(0.3)
    recorder.close(timeout=0.3)
    assert len(path.read_bytes().splitlines()) == 1 + 4 + 2
    assert "loop-inspector recorder:" in capsys.readouterr().err
