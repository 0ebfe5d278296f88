"""One message of a message-list transcript as a canonical Message: an OpenAI Chat message
whose content parts may be Anthropic blocks or Responses parts, with the benchmarks' tool
result conventions (SWE-agent's `tool_call_ids`, failures written as "Error...")."""

from __future__ import annotations

import re
from typing import Any

from ...coerce import str_or_none, text_of
from ...model import Block, Message
from ..dialects import anthropic
from ..dialects import openai_chat as chat
from ..dialects import openai_responses as responses

ERROR_RESULT = re.compile(r"Error\b")
"""OpenAI tool messages have no error flag; tau-bench and SWE-agent tools report failures
as results starting with "Error" (e.g. "Error: gift card balance is not enough")."""

RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file"})
CHAT_PARTS = frozenset({"image_url", "file", "input_audio", "refusal"})
"""Content-part types read by those dialects; every other part is read as an Anthropic
block (text, tool_use, tool_result, thinking, image...)."""


def normalize_message(raw: Any) -> Message:
    """One transcript message as a canonical Message: an OpenAI Chat message whose content
    parts may be Anthropic blocks or Responses parts; tool results follow the benchmarks'
    conventions (SWE-agent's `tool_call_ids`, failures written as "Error...")."""
    if isinstance(raw, dict):
        role = str(raw.get("role") or "unknown")
        if role == "tool" or "tool_call_id" in raw or "tool_call_ids" in raw:
            return Message(role, _tool_results(raw))
        if role == "function":
            return Message(role, (_result_block(raw, None),))
    return chat.normalize_message(raw, read_part=_part)


def _tool_results(raw: dict[str, Any]) -> tuple[Block, ...]:
    """An OpenAI tool message; SWE-agent names the calls it answers in `tool_call_ids`."""
    ids = raw.get("tool_call_ids")
    if isinstance(ids, list) and ids:
        return tuple(_result_block(raw, tool_id) for tool_id in ids)
    return (_result_block(raw, raw.get("tool_call_id")),)


def _result_block(raw: dict[str, Any], tool_id: Any) -> Block:
    text = text_of(raw.get("content"))
    flag = raw.get("is_error")
    is_error = flag if isinstance(flag, bool) else bool(ERROR_RESULT.match(text))
    return Block(
        "tool_result",
        text=text,
        tool_id=str_or_none(tool_id),
        name=string_or_none(raw.get("name")),
        is_error=is_error,
        raw=raw,
    )


def _part(part: Any) -> Block:
    """One content part, read by the dialect whose type it is; Anthropic blocks otherwise
    (their reader also takes plain strings and unknown types)."""
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in RESPONSES_PARTS:
        return responses.part_block(part)
    if kind in CHAT_PARTS:
        return chat.part_block(part)
    return anthropic.block_from(part)


def string_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
