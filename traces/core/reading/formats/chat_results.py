"""Chat-shaped tool results shared by the readers that rebuild agents' events as Chat
messages (Kimi's wire log, OpenHands v1): a `role:"tool"` message with the `is_error`
flag the store recorded, tool output as text, and the timing of an answered call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from traces.core.records import replace

from ...model import Message, ToolTiming
from ..dialects import openai_chat


def normalize_message(raw: Any) -> Message:
    """A Chat message; a `role:"tool"` result carries the `is_error` flag the store recorded."""
    message = openai_chat.normalize_message(raw)
    if isinstance(raw, dict) and raw.get("is_error") is True and message.tool_results:
        blocks = tuple(replace(b, is_error=True) for b in message.blocks)
        return Message(message.role, blocks)
    return message


def output_text(value: Any) -> str:
    """A tool output that is not text (content parts, a number), as text."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in value)
    return str(value)


def answer_timing(
    line: int,
    tool_id: str,
    asked: tuple[str | None, float | None] | None,
    moment: float | None,
    is_error: bool,
    text: str,
) -> Iterator[ToolTiming]:
    """The run of a call that was asked for (`asked`: its tool name and start) and has just
    been answered; nothing for an orphan result, which a later request carries."""
    if asked is None:
        return
    name, started = asked
    yield ToolTiming(
        line,
        tool_id,
        name=name,
        started_at=started,
        ended_at=moment,
        is_error=is_error,
        result_text=text,
    )
