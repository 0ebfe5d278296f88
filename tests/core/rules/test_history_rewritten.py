"""history-rewritten: requests that do not extend the previous one of their loop."""

from __future__ import annotations

import orjson

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, lint, results, text

RULE = "history-rewritten"


def _loop(third: list[dict], first: list[dict]) -> list[tuple]:
    r1 = response([tool_use("t1", path="a")], "tool_use")
    h2 = [*first, echo(r1), results(tool_result("t1", "A" * 50))]
    r3 = response([text("continuing")], "end_turn")
    return lint(
        log(pair(first, r1), pair(h2, response([text("ok")], "end_turn")), pair(third, r3)), RULE
    )


def test_compacted_history():
    q = [user("plan a trip")]
    compacted = [*q, user("summary of earlier work"), user("continue")]
    assert _loop(compacted, q) == [
        (
            RULE,
            "info",
            3,
            None,
            "call 3 does not extend call 2: it keeps the first 1 of its 3 messages and replaces"
            " the rest, so the cached prefix after them is lost",
        )
    ]


def test_history_replaced_from_the_first_message():
    # Our event format names the loop, so a restarted transcript stays in it.
    q = [user("plan a trip")]
    fresh = [user("This session is being continued from a previous conversation.")]
    r1 = response([tool_use("t1", path="a")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", "A"))]
    events = [{"type": "meta", "format": "loop-inspector/events/v1", "provider": "anthropic"}]
    for number, (messages, resp) in enumerate(
        [
            (q, r1),
            (h2, response([text("ok")], "end_turn")),
            (fresh, response([text("go")], "end_turn")),
        ],
        start=1,
    ):
        body = {"model": "claude-sonnet-4-5", "messages": messages}
        events.append(
            {
                "type": "request",
                "call_id": f"c{number}",
                "ts": number,
                "body": body,
                "loop_id": "s1",
            }
        )
        events.append(
            {"type": "response", "call_id": f"c{number}", "ts": number + 0.5, "body": resp}
        )
    assert lint(log(*(orjson.dumps(e) for e in events)), RULE) == [
        (
            RULE,
            "info",
            3,
            None,
            "call 3 does not extend call 2: it replaces all 3 of its messages, so only the"
            " system prompt and tools can still be read from the cache",
        )
    ]


def test_appending_loop_passes():
    q = [user("plan a trip")]
    r1 = response([tool_use("t1", path="a")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("t1", "A" * 50))]
    extended = [*h2, {"role": "assistant", "content": [text("ok")]}, user("continue")]
    assert _loop(extended, q) == []
