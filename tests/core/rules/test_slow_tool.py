"""slow-tool: tools that ran long, measured or bounded by call timings."""

from __future__ import annotations

import orjson

from tests.core.builders import TOOLS, log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "slow-tool"


def _events(tool_seconds: float) -> bytes:
    """Our own event format, which records when each tool really ran."""
    q = [user("track the parcel")]
    r1 = response([tool_use("t1", name="read_file", path="parcel")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", "in transit"))]
    body = {"model": "claude-sonnet-4-5", "tools": TOOLS}
    events = [
        {"type": "meta", "format": "loop-inspector/events/v1", "provider": "anthropic"},
        {"type": "request", "call_id": "c1", "ts": 100.0, "body": {**body, "messages": q}},
        {"type": "response", "call_id": "c1", "ts": 102.0, "body": r1},
        {"type": "tool_start", "tool_call_id": "t1", "ts": 102.5, "name": "read_file"},
        {"type": "tool_end", "tool_call_id": "t1", "ts": 102.5 + tool_seconds},
        {
            "type": "request",
            "call_id": "c2",
            "ts": 103.0 + tool_seconds,
            "body": {**body, "messages": h2},
        },
        {
            "type": "response",
            "call_id": "c2",
            "ts": 105.0 + tool_seconds,
            "body": response([text("ok")], "end_turn"),
        },
    ]
    return log(*(orjson.dumps(event) for event in events))


def test_measured_tool_run():
    assert lint(_events(45.0), RULE) == [
        (
            RULE,
            "info",
            1,
            "t1",
            "read_file (t1) ran 45.0 s; time out slow tools, or return a job handle and poll",
        )
    ]


def test_gap_between_calls_is_an_upper_bound():
    q = [user("track the parcel")]
    r1 = response([tool_use("t1", path="parcel")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", "in transit"))]
    data = log(
        pair(q, r1, started_at=100.0, ended_at=102.0),
        pair(h2, response([text("ok")], "end_turn"), started_at=142.5, ended_at=144.0),
    )
    assert lint(data, RULE) == [
        (
            RULE,
            "info",
            1,
            "t1",
            "tools asked in call 1 (read_file) took up to 40.5 s: call 2 started that long after"
            " call 1 ended (only model calls are timed, so this is an upper bound); time out"
            " slow tools, or return a job handle and poll",
        )
    ]


def test_fast_tools_and_a_raised_threshold_pass():
    assert lint(_events(5.0), RULE) == []
    assert lint(_events(45.0), RULE, seconds=60) == []
