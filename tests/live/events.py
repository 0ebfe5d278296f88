"""Loop Inspector event lines of a small agent loop, written by hand for live tests."""

from __future__ import annotations

from typing import Any

import orjson

MODEL = "claude-sonnet-4-5"
TOOLS = [{"name": "search", "description": "Search the web", "input_schema": {"type": "object"}}]


def agent_lines(calls: int, *, start: float = 1_750_000_000.0, finish: bool = True) -> list[bytes]:
    """`calls` model calls of one loop: each but the last asks for one `search` tool call
    (logged with tool_start/tool_end), whose result the next request carries.

    Four lines per tool-asking call (request, response, tool_start, tool_end), two for
    the last one; with `finish=False` the last call asks for a tool too.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Find three facts."}]
    lines: list[dict[str, Any]] = [
        {"type": "meta", "format": "loop-inspector/events/v1", "provider": "anthropic"}
    ]
    ts = start
    for index in range(1, calls + 1):
        body = {"model": MODEL, "max_tokens": 512, "tools": TOOLS, "messages": list(messages)}
        lines.append({"type": "request", "call_id": f"c{index}", "ts": ts, "body": body})
        ts += 1.0
        last = index == calls and finish
        tool_id = f"toolu_{index:03d}"
        content: list[dict[str, Any]] = [{"type": "text", "text": f"Step {index}."}]
        if not last:
            content.append(
                {"type": "tool_use", "id": tool_id, "name": "search", "input": {"q": f"q{index}"}}
            )
        reply = {
            "id": f"msg_{index}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": content,
            "stop_reason": "end_turn" if last else "tool_use",
            "usage": {"input_tokens": 100 * index, "output_tokens": 20},
        }
        lines.append({"type": "response", "call_id": f"c{index}", "ts": ts, "body": reply})
        ts += 0.1
        if last:
            break
        lines.append({"type": "tool_start", "tool_call_id": tool_id, "name": "search", "ts": ts})
        ts += 0.5
        lines.append(
            {
                "type": "tool_end",
                "tool_call_id": tool_id,
                "name": "search",
                "ts": ts,
                "is_error": False,
            }
        )
        ts += 0.1
        messages.append({"role": "assistant", "content": content})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": tool_id, "content": f"fact {index}"}
                ],
            }
        )
    return [orjson.dumps(line) for line in lines]


def ndjson(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)
