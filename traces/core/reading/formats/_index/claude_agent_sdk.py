"""The claim `claude_agent_sdk` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/claude_agent_sdk.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "claude-agent-sdk"
"""The name of the adapter whose `sniff` this is."""

# Tuples, not sets: `in` then compares, so an odd value (a list) cannot raise.
MESSAGE_TYPES = ("system", "assistant", "user", "result", "control_request", "control_response")


def _is_sdk_message(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind in ("assistant", "user"):
        return isinstance(value.get("message"), dict) and (
            "parent_tool_use_id" in value or "session_id" in value
        )
    if kind == "system":
        return "session_id" in value and "subtype" in value
    if kind == "result":
        return "session_id" in value and ("num_turns" in value or "total_cost_usd" in value)
    if kind == "control_request":
        return "request_id" in value and isinstance(value.get("request"), dict)
    if kind == "control_response":
        return isinstance(value.get("response"), dict)
    return False


def _unwrap(value: Any, lenient: bool = False) -> list[Any] | None:
    """The SDK messages a record holds: itself, or the list of a wrapper document.

    `lenient` (reading, not sniffing) takes any object typed like a stream message, so a
    malformed one gets a precise line error rather than "not a stream message"."""
    if _is_sdk_message(value):
        return [value]
    if lenient and isinstance(value, dict) and value.get("type") in MESSAGE_TYPES:
        return [value]
    items = value.get("messages") if isinstance(value, dict) else None
    if isinstance(items, list):
        messages = [
            item["message"] if isinstance(item, dict) and "direction" in item else item
            for item in items
        ]
        if any(_is_sdk_message(m) for m in messages[:20]):
            return messages
    return None


def _is_str(value: dict[str, Any], key: str) -> bool:
    return isinstance(value.get(key), str)


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        messages = _unwrap(value)
        if not messages:
            continue
        kinds = {m["type"] for m in messages[:40] if isinstance(m, dict) and _is_str(m, "type")}
        if kinds & {"assistant", "result", "control_request", "control_response"} or (
            "system" in kinds
        ):
            return Detection(
                0.96,
                "Claude Agent SDK stream messages (type system/assistant/user/result with "
                "session_id, parent_tool_use_id or control_request/control_response)",
            )
    return None
