"""Small helpers to write Anthropic pair logs by hand in tests."""

from __future__ import annotations

from typing import Any

import orjson

TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    }
]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def tool_use(tool_id: str, name: str = "read_file", **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


def tool_result(tool_id: str, content: str, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def response(content: list[dict], stop: str, input_tokens: int = 100, output: int = 20):
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": input_tokens, "output_tokens": output},
    }


def pair(messages: list[dict], resp: dict | None, system: str = "You help.", **extra) -> bytes:
    body = {"model": "claude-sonnet-4-5", "system": system, "tools": TOOLS, "messages": messages}
    return orjson.dumps({"request": body, "response": resp, **extra})


def log(*lines: bytes) -> bytes:
    return b"\n".join(lines) + b"\n"
