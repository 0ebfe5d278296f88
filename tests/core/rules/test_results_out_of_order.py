"""results-out-of-order: a batch's results returned in another order than asked."""

from __future__ import annotations

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "results-out-of-order"


def _loop(*order: str) -> list[tuple]:
    q = [user("read a and b")]
    r1 = response([tool_use("t_a", path="a"), tool_use("t_b", path="b")], "tool_use")
    h2 = [*q, echo(r1), results(*(tool_result(i, i.upper()) for i in order))]
    return lint(log(pair(q, r1), pair(h2, response([text("done")], "end_turn"))), RULE)


def test_reversed_results():
    assert _loop("t_b", "t_a") == [
        (
            RULE,
            "info",
            2,
            "t_b",
            "results of the parallel calls of call 1 came back as t_b, t_a, not in the order"
            " asked (t_a, t_b); append results in call order",
        )
    ]


def test_results_in_call_order_pass():
    assert _loop("t_a", "t_b") == []
