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


def _booking(user_text: str, first_result: str, second: dict, system: str = "You help."):
    """The docstring's example: Priya checked, then a second check one round trip later."""
    q = [user(user_text)]
    r1 = response(
        [tool_use("t1", name="check_availability", attendee="Priya", slot="slot_3")],
        "tool_use",
        input_tokens=800,
    )
    h2 = [*q, echo(r1), results(tool_result("t1", first_result))]
    r2 = response([second], "tool_use", input_tokens=1260)
    h3 = [*h2, echo(r2), results(tool_result(second["id"], "free"))]
    r3 = response([text("both free")], "end_turn", input_tokens=1300)
    return lint(
        log(
            request_pair(q, r1, tools=[CHECK], system=system),
            request_pair(h2, r2, tools=[CHECK], system=system),
            request_pair(h3, r3, tools=[CHECK], system=system),
        ),
        RULE,
    )


def test_values_match_whatever_their_case_and_surrounding_whitespace():
    # The user wrote "Tom" and "Slot_3"; the model writes " tom " and "slot_3".
    second = tool_use("t2", name="check_availability", attendee=" tom ", slot="slot_3")
    found = _booking("Book 30 minutes with Priya and Tom in Slot_3.", "Priya is free", second)
    assert [(rule, call, tool_id) for rule, _, call, tool_id, _ in found] == [(RULE, 2, "t2")]


def test_a_value_from_the_system_prompt_counts_as_known():
    second = tool_use("t2", name="check_availability", attendee="TOM", slot="slot_3")
    found = _booking(
        "Book 30 minutes with Priya in slot_3.",
        "Priya is free",
        second,
        system="The team is Priya and Tom.",
    )
    assert [call for _, _, call, _, _ in found] == [2]


def test_a_value_that_came_from_the_previous_result_is_a_dependency():
    # Near miss: only Priya's answer named Tom; the second check needed that result.
    second = tool_use("t2", name="check_availability", attendee="tom", slot="slot_3")
    assert _booking("Book 30 minutes with Priya in slot_3.", "Priya is out; ask Tom", second) == []


def test_a_value_inside_a_longer_word_is_not_known():
    # Near miss: "tom" is in "tomorrow", but the name itself came from the result.
    second = tool_use("t2", name="check_availability", attendee="Tom", slot="slot_3")
    found = _booking("Book slot_3 tomorrow with Priya.", "Priya is out; Tom covers", second)
    assert found == []


def test_a_value_dropped_by_a_history_rewrite_is_no_longer_known():
    # Call 3 rewrote history: the message naming Tom is gone; Tom came back in a result.
    u1 = user("Plan a meeting.")
    r1 = response([text("With whom?")], "end_turn")
    r2 = response([text("Which slot?")], "end_turn")
    kept = [u1, echo(r1), user("Only Priya, in slot_3.")]
    r3 = response(
        [tool_use("t1", name="check_availability", attendee="Priya", slot="slot_3")],
        "tool_use",
    )
    h4 = [*kept, echo(r3), results(tool_result("t1", "Priya is out; ask Tom"))]
    r4 = response(
        [tool_use("t2", name="check_availability", attendee="tom", slot="slot_3")], "tool_use"
    )
    data = log(
        request_pair([u1], r1, tools=[CHECK]),
        request_pair([u1, echo(r1), user("Priya and Tom.")], r2, tools=[CHECK]),
        request_pair(kept, r3, tools=[CHECK]),
        request_pair(h4, r4, tools=[CHECK]),
    )
    assert lint(data, RULE) == []
    # The same loop without the rewrite: Tom was known, the rule fires.
    h4_kept = [u1, echo(r1), user("Priya and Tom."), echo(r2), user("slot_3")]
    h5 = [*h4_kept, echo(r3), results(tool_result("t1", "Priya is out; ask Tom"))]
    data = log(
        request_pair([u1], r1, tools=[CHECK]),
        request_pair([u1, echo(r1), user("Priya and Tom.")], r2, tools=[CHECK]),
        request_pair(h4_kept, r3, tools=[CHECK]),
        request_pair(h5, r4, tools=[CHECK]),
    )
    assert [call for _, _, call, _, _ in lint(data, RULE)] == [4]


def test_whole_word_matching():
    from traces.core.analysis.rules.serial_independent_calls import contains_word

    assert contains_word("book with tom in slot_3.", "tom")
    assert contains_word("book with tom in slot_3.", "slot_3")
    assert not contains_word("tomorrow, with tomas", "tom")
    assert contains_word("tomorrow, then tom", "tom")  # a later occurrence counts
    assert contains_word("run a-x now", "-x")  # no word end at "-": glued is fine
    assert contains_word("2024-05-01 10:00", "05-01")
    assert not contains_word("2024-05-011", "05-01")


def test_fallback_after_an_inferred_error_is_not_flagged():
    # The first check's result is not flagged, but it says it failed: the second check
    # may be the fallback, as after a flagged error.
    other = tool_use("t2", name="check_availability", attendee="tom", slot="slot_3")
    assert _loop(other, first_result="Error: calendar timed out after 5 s") == []
