"""A failed generation inside an HTTP error body (`tool_use_failed` with
`failed_generation`): a failed call that shows the tool call it attempted; the retry
pairs normally and nothing dangles."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.failed_generation import attempted_tool_calls, describe
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.render.links import PrefixLinks
from traces.core.outputs.render.sequence import render_sequence
from traces.core.outputs.report import build_report

TAG = '<function=read_file>{"path": "b.txt"}</function>'


def _error(failed: Any) -> dict[str, Any]:
    return {
        "error": {
            "message": "Failed to call a function. Please adjust your prompt. See"
            " 'failed_generation' for more details.",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
            "failed_generation": failed,
        }
    }


@pytest.mark.parametrize(
    ("failed", "calls"),
    [
        (TAG, [{"name": "read_file", "arguments": {"path": "b.txt"}}]),
        ('<function=search{"q": "x"}>', [{"name": "search", "arguments": {"q": "x"}}]),
        ("<function=now></function>", [{"name": "now", "arguments": {}}]),
        (
            '{"name": "search", "arguments": {"q": "x"}}',
            [{"name": "search", "arguments": {"q": "x"}}],
        ),
        (
            '[{"function": {"name": "a", "arguments": "{\\"k\\": 1}"}}, {"name": "b"}]',
            [{"name": "a", "arguments": {"k": 1}}, {"name": "b", "arguments": None}],
        ),
        ("I will now read the file.", []),  # text only: no call to show, the text is kept
    ],
)
def test_attempted_calls_are_read_from_the_error_body(failed: str, calls: list[dict]):
    assert attempted_tool_calls(_error(failed)) == calls


def test_no_failed_generation_no_attempt():
    assert attempted_tool_calls({"error": {"code": "rate_limit_exceeded"}}) is None
    assert attempted_tool_calls(None) is None
    assert describe([{"name": "a", "arguments": {"k": 1}}]) == 'a({"k":1})'


def _call(call_id: str, path: str) -> dict[str, Any]:
    arguments = orjson.dumps({"path": path}).decode()
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "read_file", "arguments": arguments},
    }


def _line(messages: list[dict[str, Any]], status: int, body: dict[str, Any]) -> bytes:
    request = {
        "url": "https://api.groq.com/openai/v1/chat/completions",
        "body": {"model": "llama-3.3-70b", "messages": messages},
    }
    return orjson.dumps({"request": request, "response": {"status_code": status, "body": body}})


def _ok(message: dict[str, Any], finish: str) -> dict[str, Any]:
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "llama", "choices": [choice]}


def _trace():
    q = [{"role": "user", "content": "read a.txt, then b.txt"}]
    ask_a = {"role": "assistant", "content": None, "tool_calls": [_call("call_a", "a.txt")]}
    h2 = [*q, ask_a, {"role": "tool", "tool_call_id": "call_a", "content": "A"}]
    ask_b = {"role": "assistant", "content": None, "tool_calls": [_call("call_b", "b.txt")]}
    h4 = [*h2, ask_b, {"role": "tool", "tool_call_id": "call_b", "content": "B"}]
    done = {"role": "assistant", "content": "Both read."}
    data = b"\n".join(
        [
            _line(q, 200, _ok(ask_a, "tool_calls")),
            _line(h2, 400, _error(TAG)),  # the model wrote the call as text
            _line(h2, 200, _ok(ask_b, "tool_calls")),  # the client retried the same request
            _line(h4, 200, _ok(done, "stop")),
        ]
    )
    return analyze_bytes(data + b"\n")


def test_the_failed_call_shows_its_attempt_and_the_retry_pairs():
    trace = _trace()
    assert trace.format == "openai-chat"
    assert [c.status for c in trace.calls] == ["ok", "error", "ok", "ok"]
    assert [c.loop for c in trace.calls] == [1, 1, 1, 1]
    failed = trace.calls[1]
    assert failed.http_status == 400 and "tool_use_failed" in (failed.error or "")
    assert failed.response is None and failed.tool_call_ids == ()
    # The attempt is not a tool run: nothing dangles, the retry's call pairs.
    assert [(r.id, r.call, r.result_call, r.status) for r in trace.tool_runs] == [
        ("call_a", 1, 2, "paired"),
        ("call_b", 3, 4, "paired"),
    ]
    report = build_report(trace)
    assert report["calls"][1]["attempted_tool_calls"] == [
        {"name": "read_file", "arguments": {"path": "b.txt"}}
    ]
    assert all("attempted_tool_calls" not in report["calls"][i] for i in (0, 2, 3))
    svg = render_sequence(report, links=PrefixLinks("/t/"))
    assert "tried read_file(" in svg
    assert "the model tried to call read_file(" in svg


def test_failed_generation_report_is_golden():
    # A Groq log: a call, a tool_use_failed rejection, the retry, an exit-code result.
    data = golden_input("openai-chat/failed_generation.jsonl")
    report = build_report(analyze_bytes(data, filename="failed_generation.jsonl"))
    assert_golden("openai-chat/failed_generation.report.json", report)
    assert report["calls"][1]["attempted_tool_calls"][0]["name"] == "read_file"
    assert report["tool_runs"][1]["error_inferred"] == "exit code 2 in the output"
