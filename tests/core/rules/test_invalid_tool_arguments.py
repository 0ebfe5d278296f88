"""invalid-tool-arguments: arguments checked against the tool's own JSON Schema."""

from __future__ import annotations

from typing import Any

from tests.core.builders import log, response, user
from tests.core.rules.lint import lint, request_pair

RULE = "invalid-tool-arguments"

SLOTS = {
    "name": "find_free_slots",
    "description": "Free 30-minute slots between two ISO timestamps.",
    "input_schema": {
        "type": "object",
        "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
        "required": ["from", "to"],
        "additionalProperties": False,
    },
}
PATCH = {"type": "custom", "name": "apply_patch", "description": "Apply a patch (free text)."}


def _call(arguments: Any, name: str = "find_free_slots") -> list[tuple]:
    block = {"type": "tool_use", "id": "t1", "name": name, "input": arguments}
    resp = response([block], "tool_use")
    return lint(log(request_pair([user("book")], resp, tools=[SLOTS, PATCH])), RULE)


def _finding(problem: str, name: str = "find_free_slots") -> list[tuple]:
    return [
        (
            RULE,
            "error",
            1,
            "t1",
            f"arguments of {name} (t1) in call 1 {problem}; validate before running and"
            " return the error as the result",
        )
    ]


def test_missing_required_argument():
    assert _call({"from": "2026-03-01T09:00"}) == _finding(
        "fail its schema at $: 'to' is a required property"
    )


def test_wrong_type_names_the_path():
    assert _call({"from": "2026-03-01T09:00", "to": 5}) == _finding(
        "fail its schema at $.to: 5 is not of type 'string'"
    )


def test_several_problems_are_counted():
    assert _call({"to": 5, "when": "now"}) == _finding(
        "fail its schema at $: 'from' is a required property (+2 more)"
    )


def test_arguments_that_are_not_json():
    # Adapters keep unparseable argument strings as the raw string.
    assert _call('{"from": "2026-03-01T09:00", "to": ') == _finding(
        'are not valid JSON (unexpected end of data): \'{"from": "2026-03-01T09:00", "to":\''
    )


def test_arguments_that_are_json_but_not_an_object():
    assert _call('"2026-03-01T09:00"') == _finding(
        "fail its schema at $: '2026-03-01T09:00' is not of type 'object'"
    )


def test_valid_arguments_and_free_text_tools_pass():
    assert _call({"from": "2026-03-01T09:00", "to": "2026-03-01T17:00"}) == []
    assert _call("*** Begin Patch\n*** End Patch", name="apply_patch") == []


def test_schema_draft_is_taken_from_the_schema():
    # Draft 4 reads exclusiveMaximum as a boolean; Draft 2020-12 would reject the schema.
    draft4 = {
        "name": "pick",
        "input_schema": {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "maximum": 10, "exclusiveMaximum": True}},
        },
    }
    resp = response(
        [{"type": "tool_use", "id": "t1", "name": "pick", "input": {"n": 10}}], "tool_use"
    )
    found = lint(log(request_pair([user("pick")], resp, tools=[draft4])), RULE)
    assert [f[4] for f in found] == [
        "arguments of pick (t1) in call 1 fail its schema at $.n: 10 is greater than or equal"
        " to the maximum of 10; validate before running and return the error as the result"
    ]
