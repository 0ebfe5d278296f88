"""Ids for a mapped log whose tool calls and results carry none: pairing by order and name.

Some stores log a tool call by its name alone (Gemini's `functionCall`, a text log's
`TOOL find_rooms ...` line). The rest of Loop Inspector pairs by id, so a mapped log
without ids is given them here: a tool call without one is named by where it stands in
its loop (`<loop>:<message>.<n>`, the same each time a later request repeats the same
history), and a result without one answers the oldest call of its loop still waiting for
a result, the oldest of the same tool when the result names its tool. A result nothing
waits for gets an id of its own, so it shows as an orphan instead of vanishing.
"""

from __future__ import annotations

from typing import Any

from traces.core.records import dataclass, field

RESULT_NAME = "_result_name"
"""Where a mapped tool_result block keeps its tool's name until it is paired."""


def call_id(loop: str, message: int, position: int) -> str:
    """The id of a tool call that has none: its loop, message (1-based) and place in it."""
    return f"{loop}:{message}.{position}"


@dataclass(slots=True)
class Waiting:
    """Tool calls of one loop that no result has answered yet, oldest first."""

    calls: list[tuple[str, str | None]] = field(default_factory=list)

    def asked(self, tool_id: str, name: str | None) -> None:
        self.calls.append((tool_id, name))

    def answered(self, tool_id: str) -> None:
        self.calls = [(i, n) for i, n in self.calls if i != tool_id]

    def answer(self, name: str | None) -> str | None:
        """The id the next result (of tool `name`, when known) answers, or None."""
        for index, (tool_id, called) in enumerate(self.calls):
            if name is None or called is None or called == name:
                del self.calls[index]
                return tool_id
        return None


def name_calls(message: dict[str, Any], loop: str, position: int, waiting: Waiting) -> None:
    """Give the tool calls of one message (at 1-based `position`) ids where they have
    none, and count them as waiting for a result."""
    number = 0
    for block in message["content"]:
        if block.get("type") != "tool_use":
            continue
        number += 1
        if block.get("id") is None:
            block["id"] = call_id(loop, position, number)
        waiting.asked(block["id"], block.get("name"))


def pair_results(message: dict[str, Any], loop: str, position: int, waiting: Waiting) -> None:
    """Give the tool results of one message the id of the call each answers."""
    for number, block in enumerate(message["content"], start=1):
        if block.get("type") != "tool_result":
            continue
        name = block.pop(RESULT_NAME, None)
        if block.get("tool_use_id") is None:
            found = waiting.answer(name)
            block["tool_use_id"] = found or f"{loop}:{position}.result{number}"
        else:
            waiting.answered(block["tool_use_id"])


def pair_transcript(messages: list[dict[str, Any]], loop: str) -> Waiting:
    """Ids for a whole request (a log that records each request's messages): calls in
    order, each result paired with the call it answers; returns the calls still waiting."""
    waiting = Waiting()
    for position, message in enumerate(messages, start=1):
        pair_results(message, loop, position, waiting)
        name_calls(message, loop, position, waiting)
    return waiting
