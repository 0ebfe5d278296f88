"""split-parallel-results: results of one batch sent back in several messages."""

from __future__ import annotations

import orjson

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "split-parallel-results"
Q = [user("read a and b")]
R1 = response([tool_use("t_a", path="a"), tool_use("t_b", path="b")], "tool_use")
DONE = response([text("done")], "end_turn")


def _finding(call: int, how: str) -> list[tuple]:
    return [
        (
            RULE,
            "warning",
            call,
            "t_b",
            f"results of the 2 parallel calls of call 1 came back {how}; send all results of a"
            " batch in one message",
        )
    ]


def test_results_across_two_requests():
    h2 = [*Q, echo(R1), results(tool_result("t_a", "A"))]
    r2 = response([text("waiting for b")], "end_turn")
    h3 = [*h2, echo(r2), results(tool_result("t_b", "B"))]
    data = log(pair(Q, R1), pair(h2, r2), pair(h3, DONE))
    assert lint(data, RULE) == _finding(3, "across requests 2, 3 (t_b late)")


def test_results_in_two_user_messages_of_one_request():
    h2 = [*Q, echo(R1), results(tool_result("t_a", "A")), results(tool_result("t_b", "B"))]
    assert lint(log(pair(Q, R1), pair(h2, DONE)), RULE) == _finding(
        2, "in 2 separate messages of call 2"
    )


def test_the_finding_sits_on_the_first_result_sent_apart():
    r1 = response([tool_use(i, path=i) for i in ("t_a", "t_b", "t_c")], "tool_use")
    together = results(tool_result("t_a", "A"), tool_result("t_b", "B"))
    h2 = [*Q, echo(r1), together, results(tool_result("t_c", "C"))]
    assert lint(log(pair(Q, r1), pair(h2, DONE)), RULE) == [
        (
            RULE,
            "warning",
            2,
            "t_c",
            "results of the 3 parallel calls of call 1 came back in 2 separate messages of"
            " call 2; send all results of a batch in one message",
        )
    ]


def test_one_user_message_passes():
    h2 = [*Q, echo(R1), results(tool_result("t_a", "A"), tool_result("t_b", "B"))]
    assert lint(log(pair(Q, R1), pair(h2, DONE)), RULE) == []


def test_consecutive_openai_tool_messages_are_one_turn():
    # Chat Completions sends one role:"tool" message per result: that is not a split.
    calls = [
        {"id": i, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        for i in ("c_a", "c_b")
    ]
    asked = {"role": "assistant", "content": None, "tool_calls": calls}
    first = {
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": asked, "finish_reason": "tool_calls"}],
    }
    second = {
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
    }
    q = [{"role": "user", "content": "read a and b"}]
    answers = [{"role": "tool", "tool_call_id": i, "content": i.upper()} for i in ("c_a", "c_b")]
    lines = [
        orjson.dumps({"request": {"model": "gpt-4o-mini", "messages": q}, "response": first}),
        orjson.dumps(
            {
                "request": {"model": "gpt-4o-mini", "messages": [*q, asked, *answers]},
                "response": second,
            }
        ),
    ]
    assert lint(log(*lines), RULE) == []
