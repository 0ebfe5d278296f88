"""oversized-tool-result: big results, with what re-sending them cost."""

from __future__ import annotations

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "oversized-tool-result"


def _loop() -> bytes:
    # Exact usage: call 2 appended 1200 - 100 - 20 = 1080 tokens besides the echoed reply
    # (its 20 output tokens), all of them the one result.
    q = [user("read the order")]
    r1 = response([tool_use("t1", path="order.json")], "tool_use", input_tokens=100, output=20)
    h2 = [*q, echo(r1), results(tool_result("t1", "order " * 900))]
    r2 = response([text("more?")], "end_turn", input_tokens=1200, output=10)
    h3 = [*h2, echo(r2), user("yes")]
    r3 = response([text("done")], "end_turn", input_tokens=1230, output=10)
    return log(pair(q, r1), pair(h2, r2), pair(h3, r3))


def test_big_result_with_its_resend_cost():
    assert lint(_loop(), RULE) == [
        (
            RULE,
            "warning",
            2,
            "t1",
            "result of read_file (t1) is 1,080 tokens, re-sent in 2 request(s) for 2,160 input"
            " tokens; return only the fields the model needs",
        )
    ]


def test_threshold_is_an_option():
    assert lint(_loop(), RULE, result_tokens=1081) == []
    assert len(lint(_loop(), RULE, result_tokens=1080)) == 1
