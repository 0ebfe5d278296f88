"""orphan-tool-result: results whose id answers no tool call."""

from __future__ import annotations

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results

RULE = "orphan-tool-result"


def _loop(result_id: str) -> bytes:
    q = [user("read a")]
    r1 = response([tool_use("toolu_1", path="a")], "tool_use")
    r2 = response([{"type": "text", "text": "done"}], "end_turn")
    return log(pair(q, r1), pair([*q, echo(r1), results(tool_result(result_id, "A"))], r2))


def test_id_with_a_stray_space_is_an_orphan_and_the_intended_call_is_named():
    assert lint(_loop("toolu_1 "), RULE) == [
        (
            RULE,
            "error",
            2,
            "toolu_1 ",
            "tool result 'toolu_1 ' sent in call 2 answers no tool call: tool call 'toolu_1'"
            " differs only by whitespace, copy ids verbatim",
        )
    ]


def test_unknown_id_is_an_orphan():
    assert lint(_loop("toolu_9"), RULE) == [
        (
            RULE,
            "error",
            2,
            "toolu_9",
            "tool result 'toolu_9' sent in call 2 answers no tool call: send results only for"
            " ids the previous assistant message asked for",
        )
    ]


def test_exact_id_is_not_an_orphan():
    assert lint(_loop("toolu_1"), RULE) == []
