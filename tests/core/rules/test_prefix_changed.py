"""prefix-changed: system prompt or tool definitions that change between calls."""

from __future__ import annotations

import copy
from typing import Any

from tests.core.builders import TOOLS, log, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, request_pair, results, text

RULE = "prefix-changed"


def _two_calls(
    system1: Any, system2: Any, tools1: list[dict] | None = None, tools2: list[dict] | None = None
) -> list[tuple]:
    q = [user("read a")]
    r1 = response([tool_use("t1", path="a")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", "A"))]
    r2 = response([text("done")], "end_turn")
    data = log(
        request_pair(q, r1, system=system1, tools=tools1),
        request_pair(h2, r2, system=system2, tools=tools2),
    )
    return lint(data, RULE)


def _finding(what: str, detail: str = "") -> tuple:
    return (
        RULE,
        "warning",
        2,
        None,
        f"call 2 changed the {what} sent in call 1{detail}; prompt caching misses from there,"
        " keep the prefix byte-stable",
    )


def test_changed_system_prompt():
    assert _two_calls("You help. It is 14:03:27.", "You help. It is 14:03:41.") == [
        _finding("system prompt")
    ]


def test_moved_cache_marker_is_reported_but_named():
    marked = [{"type": "text", "text": "You help.", "cache_control": {"type": "ephemeral"}}]
    plain = [{"type": "text", "text": "You help."}]
    assert _two_calls(marked, plain) == [
        _finding("system prompt", ": only cache_control markers moved")
    ]


def test_tool_changes_name_the_tools():
    edited = copy.deepcopy(TOOLS)
    edited[0]["description"] = "Read a file (UTF-8)"
    extra = {"name": "list_dir", "input_schema": {"type": "object"}}
    assert _two_calls("s", "s", TOOLS, [*edited, extra]) == [
        _finding("tool definitions", ": added list_dir; changed read_file")
    ]


def test_tool_order_only():
    extra = {"name": "list_dir", "input_schema": {"type": "object"}}
    assert _two_calls("s", "s", [*TOOLS, extra], [extra, *TOOLS]) == [
        _finding("tool definitions", ": same tools in a different order")
    ]


def test_key_order_is_a_byte_change():
    reordered = [{key: TOOLS[0][key] for key in reversed(list(TOOLS[0]))}]
    assert _two_calls("s", "s", TOOLS, reordered) == [
        _finding("tool definitions", ": changed read_file")
    ]


def test_equal_prefix_in_fresh_objects_passes():
    assert _two_calls("You help.", "You help.", copy.deepcopy(TOOLS), copy.deepcopy(TOOLS)) == []
