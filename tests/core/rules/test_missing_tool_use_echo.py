"""missing-tool-use-echo: results sent without the assistant tool_use before them."""

from __future__ import annotations

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results

RULE = "missing-tool-use-echo"


def _loop(echoed: bool) -> bytes:
    q = [user("read a and b")]
    r1 = response([tool_use("t1", path="a"), tool_use("t2", path="b")], "tool_use")
    answer = results(tool_result("t1", "A"), tool_result("t2", "B"))
    history = [*q, echo(r1), answer] if echoed else [*q, answer]
    r2 = response([{"type": "text", "text": "done"}], "end_turn")
    return log(pair(q, r1), pair(history, r2))


def test_results_without_the_echoed_tool_use():
    assert lint(_loop(echoed=False), RULE) == [
        (
            RULE,
            "error",
            2,
            "t1",
            "call 2 sends the result of t1 (read_file, asked in call 1) and 1 more without the"
            " assistant tool_use in its transcript; echo the assistant message before the"
            " results",
        )
    ]


def test_echoed_tool_use_is_fine():
    assert lint(_loop(echoed=True), RULE) == []
