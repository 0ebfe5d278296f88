"""serial-independent-calls: one call per round trip where one batch would have done."""

from __future__ import annotations

from tests.core.builders import log, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, request_pair, results, text

RULE = "serial-independent-calls"
CHECK = {
    "name": "check_availability",
    "input_schema": {
        "type": "object",
        "properties": {"attendee": {"type": "string"}, "slot": {"type": "string"}},
    },
}


def _loop(second: dict, first_result: str = "priya is free", is_error: bool = False):
    q = [user("Book 30 minutes with priya and tom in slot_3.")]
    r1 = response(
        [tool_use("t1", name="check_availability", attendee="priya", slot="slot_3")],
        "tool_use",
        input_tokens=800,
    )
    h2 = [*q, echo(r1), results(tool_result("t1", first_result, is_error))]
    r2 = response([second], "tool_use", input_tokens=1260)
    h3 = [*h2, echo(r2), results(tool_result(second["id"], "tom is free"))]
    r3 = response([text("both free")], "end_turn", input_tokens=1300)
    data = log(
        request_pair(q, r1, tools=[CHECK]),
        request_pair(h2, r2, tools=[CHECK]),
        request_pair(h3, r3, tools=[CHECK]),
    )
    return lint(data, RULE)


def test_second_check_could_have_gone_in_the_first_batch():
    second = tool_use("t2", name="check_availability", attendee="tom", slot="slot_3")
    assert _loop(second) == [
        (
            RULE,
            "warning",
            2,
            "t2",
            "call 2 asked check_availability (t2) one round trip after call 1 asked"
            " check_availability, though all its arguments were known before that result;"
            " one parallel batch would have saved this call's 1,260 input tokens",
        )
    ]


def test_argument_taken_from_the_result_is_a_dependency():
    second = tool_use("t2", name="check_availability", attendee="tom", slot="slot_7")
    assert _loop(second, first_result="priya is busy; slot_7 is free") == []


def test_retry_and_fallback_after_an_error_are_not_flagged():
    same = tool_use("t2", name="check_availability", attendee="priya", slot="slot_3")
    assert _loop(same) == []
    other = tool_use("t2", name="check_availability", attendee="tom", slot="slot_3")
    assert _loop(other, first_result="error: calendar timed out", is_error=True) == []


def test_calls_without_meaningful_arguments_prove_nothing():
    assert _loop(tool_use("t2", name="check_availability", attendee="t", slot="")) == []
