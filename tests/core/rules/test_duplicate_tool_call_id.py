"""duplicate-tool-call-id: one id for two calls, in one response or across calls."""

from __future__ import annotations

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results

RULE = "duplicate-tool-call-id"


def test_two_blocks_with_one_id_in_one_response():
    r1 = response([tool_use("t1", path="a"), tool_use("t1", path="b")], "tool_use")
    assert lint(log(pair([user("read a and b")], r1)), RULE) == [
        (
            RULE,
            "error",
            1,
            "t1",
            "tool call id 't1' is used 2 times in the response of call 1; give every call its"
            " own id",
        )
    ]


def _two_calls(second_id: str) -> bytes:
    q = [user("read a then b")]
    r1 = response([tool_use("t1", path="a")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", "A"))]
    r2 = response([tool_use(second_id, path="b")], "tool_use")
    h3 = [*h2, echo(r2), results(tool_result(second_id, "B"))]
    r3 = response([{"type": "text", "text": "done"}], "end_turn")
    return log(pair(q, r1), pair(h2, r2), pair(h3, r3))


def test_id_reused_by_a_later_call():
    assert lint(_two_calls("t1"), RULE) == [
        (
            RULE,
            "error",
            2,
            "t1",
            "tool call id 't1' is reused by call 2 (read_file) after call 1 (read_file);"
            " results pair with the newest; give every call its own id",
        )
    ]


def test_distinct_ids_are_fine():
    assert lint(_two_calls("t2"), RULE) == []
