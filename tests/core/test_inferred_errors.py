"""Errors with no error flag: results that read as failures are *inferred* errors, with the
reason, and stay apart from the results a format flagged."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces.core.analysis.inferred_errors import inferred_error
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.export_md import render_markdown
from traces.core.outputs.postmortem import build_postmortem
from traces.core.outputs.report import build_report

SDK_FAILURE = (
    "An error occurred while running the tool. Please try again. Error: timed out after 30 s"
)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Chunk ID: 1\nProcess exited with code 2\nOutput:\n", "exit code 2 in the output"),
        ('{"output": "", "metadata": {"exit_code": -1}}', "exit code -1 in the output"),
        ('{"exit_code": 127, "stdout": ""}', "exit code 127 in the output"),
        ("Exit code: 1\nno such file", "exit code 1 in the output"),
        (SDK_FAILURE, 'the text says "An error occurred while running the tool"'),
        ("Traceback (most recent call last):\n  File x", "the text holds a Python traceback"),
        ("Error: attendee not found", 'the text starts with "Error"'),
        ("  [FAILED] tests/test_io.py", 'the text starts with "FAILED"'),
        ("failed to parse function arguments: EOF", 'the text starts with "failed"'),
        ("fatal: not a git repository", 'the text starts with "fatal"'),
        ("FileNotFoundError: [Errno 2] x", "the text starts with the exception FileNotFoundError"),
    ],
)
def test_failure_texts_are_inferred_with_their_reason(text: str, reason: str):
    assert inferred_error(text) == reason


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Process exited with code 0\nOutput:\nok",
        '{"output": "done", "metadata": {"exit_code": 0}}',
        "No errors found in 12 files",
        "README.md\nsrc/main.py",
        'the config says "exit_code": 3 somewhere in a file',
        "error handling was added to parse()",
        "Exceptions are logged to stderr",
        "Errors: none",
    ],
)
def test_successes_and_near_misses_are_not_errors(text: str):
    assert inferred_error(text) is None


def _chat(messages: list[dict[str, Any]], message: dict[str, Any], finish: str) -> bytes:
    body = {"model": "gpt-4o", "messages": messages}
    choice = {"index": 0, "message": message, "finish_reason": finish}
    reply = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [choice],
    }
    return orjson.dumps({"request": body, "response": reply})


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_openai_chat_results_have_no_flag_so_failures_are_inferred():
    q = [{"role": "user", "content": "run the tests, then fetch the page"}]
    ask1 = {"role": "assistant", "content": None, "tool_calls": [_call("c1", "shell", "{}")]}
    out1 = {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"output":"","metadata":{"exit_code":-1}}',
    }
    ask2 = {"role": "assistant", "content": None, "tool_calls": [_call("c2", "fetch", "{}")]}
    out2 = {"role": "tool", "tool_call_id": "c2", "content": SDK_FAILURE}
    ask3 = {"role": "assistant", "content": None, "tool_calls": [_call("c3", "shell", "{}")]}
    out3 = {"role": "tool", "tool_call_id": "c3", "content": "Process exited with code 0\nok"}
    done = {"role": "assistant", "content": "done"}
    trace = analyze_bytes(
        log(
            _chat(q, ask1, "tool_calls"),
            _chat([*q, ask1, out1], ask2, "tool_calls"),
            _chat([*q, ask1, out1, ask2, out2], ask3, "tool_calls"),
            _chat([*q, ask1, out1, ask2, out2, ask3, out3], done, "stop"),
        )
    )
    assert trace.format == "openai-chat"
    runs = {run.id: run for run in trace.tool_runs}
    assert {run.status for run in runs.values()} == {"paired"}
    assert not any(run.is_error for run in runs.values())  # nothing was flagged
    assert runs["c1"].error_inferred == "exit code -1 in the output"
    assert runs["c2"].error_inferred == 'the text says "An error occurred while running the tool"'
    assert runs["c3"].error_inferred is None

    report = build_report(trace)
    by_id = {run["id"]: run for run in report["tool_runs"]}
    assert by_id["c1"]["is_error"] is False
    assert by_id["c1"]["error_inferred"] == "exit code -1 in the output"
    assert "error_inferred" not in by_id["c3"]  # the key is added only when there is one

    pm = build_postmortem(report, "chat")
    assert pm.error_results == []
    assert [run["id"] for run in pm.inferred_error_results] == ["c1", "c2"]
    markdown = render_markdown(pm)
    assert "## Inferred error tool results (not flagged by the format)" in markdown
    assert "## Error tool results" not in markdown


def test_a_flagged_error_is_not_also_inferred():
    q = [user("read x and y")]
    r1 = response([tool_use("t1", path="x"), tool_use("t2", path="y")], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    results = {
        "role": "user",
        "content": [
            tool_result("t1", "Error: no such file", is_error=True),
            tool_result("t2", "Error: permission denied"),
        ],
    }
    r2 = response([{"type": "text", "text": "both failed"}], "end_turn")
    trace = analyze_bytes(log(pair(q, r1), pair([*q, echo, results], r2)))
    runs = {run.id: run for run in trace.tool_runs}
    assert runs["t1"].is_error and runs["t1"].error_inferred is None
    assert not runs["t2"].is_error
    assert runs["t2"].error_inferred == 'the text starts with "Error"'
    pm = build_postmortem(build_report(trace), "x")
    assert [r["id"] for r in pm.error_results] == ["t1"]
    assert [r["id"] for r in pm.inferred_error_results] == ["t2"]
