"""Anthropic Messages API shapes: content blocks, streamed events and usage.

Follows the Messages API reference (content block types, `usage` fields) and its
streaming guide (`message_start`, `content_block_*`, `message_delta`, `error` events).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from types import MappingProxyType
from typing import Any

import orjson

from ...coerce import dict_or_empty, int_or_none, int_or_zero, str_or_none, text_of
from ...model import Block, Message, Usage
from ..sse import iter_events
from .base import Assembled, Reply

SHARED_WORDS = MappingProxyType(
    {
        word: word
        for word in (
            "user",
            "assistant",
            "text",
            "tool_use",
            "server_tool_use",
            "mcp_tool_use",
            "tool_result",
            "thinking",
            "redacted_thinking",
        )
    }
)
"""Words every message repeats (its role, each block's type): each parsed line holds its
own copy of them (orjson shares keys, not values), so the message a call keeps points at
one shared copy, put back in it (equal, and lighter: a 20,000-call session kept 125,000
copies, 7 MB)."""
TOOL_NAME_CHARS = 100
"""Tool names up to this long are shared too (interned): a session calls a few tools."""


def block_from(raw: Any) -> Block:
    """One content block, lenient about missing fields."""
    if isinstance(raw, str):
        return Block("text", text=raw, raw=raw)
    if not isinstance(raw, dict):
        return Block("other", text=str(raw), raw=raw)
    kind = raw.get("type")
    if kind == "text":
        raw["type"] = "text"  # the shared copy (SHARED_WORDS)
        return Block("text", text=str(raw.get("text") or ""), raw=raw)
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        raw["type"] = SHARED_WORDS[kind]
        name = raw.get("name")
        if type(name) is str and len(name) <= TOOL_NAME_CHARS:
            raw["name"] = name = sys.intern(name)
        return Block(
            "tool_use",
            tool_id=str_or_none(raw.get("id")),
            name=str_or_none(name),
            input=raw.get("input"),
            raw=raw,
        )
    if kind == "tool_result":
        raw["type"] = "tool_result"
        return Block(
            "tool_result",
            text=text_of(raw.get("content")),
            tool_id=str_or_none(raw.get("tool_use_id")),
            is_error=bool(raw.get("is_error")),
            raw=raw,
        )
    if kind == "thinking":
        raw["type"] = "thinking"
        return Block("thinking", text=str(raw.get("thinking") or ""), raw=raw)
    if kind == "redacted_thinking":
        raw["type"] = "redacted_thinking"
        return Block("redacted_thinking", raw=raw)
    if kind in ("image", "document"):
        return Block("image", text=f"[{kind}]", raw=raw)
    if kind == "compaction":  # server-side compaction: the summary that replaces history
        return Block("other", text=f"compaction: {text_of(raw.get('content'))}", raw=raw)
    return Block("other", text=str(kind or "block"), raw=raw)


def normalize_message(raw: Any) -> Message:
    """A request message `{role, content}` (content a string or a list of blocks)."""
    if not isinstance(raw, dict):
        return Message("unknown", (block_from(raw),))
    content = raw.get("content")
    if isinstance(content, list):
        blocks = tuple([block_from(item) for item in content])
    elif content is None:
        blocks = ()
    else:
        blocks = (block_from(str(content)),)
    role = raw.get("role")
    if role == "assistant" or role == "user":
        raw["role"] = role = SHARED_WORDS[role]
    return Message(str(role or "unknown"), blocks)


def read_response(body: dict[str, Any], messages: Sequence[Any] = ()) -> Reply:
    """A message body (or a reassembled stream) as (Message, stop_reason, Usage)."""
    message = normalize_message({"role": body.get("role") or "assistant", **body})
    return Reply(message, body.get("stop_reason"), usage_from(body.get("usage")))


def usage_from(raw: Any) -> Usage | None:
    """Anthropic usage: `input_tokens` already excludes cache reads and writes."""
    if not isinstance(raw, dict):
        return None
    detail = raw.get("cache_creation")
    if isinstance(detail, dict):
        five = int_or_none(detail.get("ephemeral_5m_input_tokens"))
        hour = int_or_none(detail.get("ephemeral_1h_input_tokens"))
    else:
        five = hour = None
    return Usage(
        input_tokens=int_or_zero(raw.get("input_tokens")),
        output_tokens=int_or_zero(raw.get("output_tokens")),
        cache_read_tokens=int_or_zero(raw.get("cache_read_input_tokens")),
        cache_write_tokens=int_or_zero(raw.get("cache_creation_input_tokens")),
        cache_write_5m_tokens=five,
        cache_write_1h_tokens=hour,
    )


def assemble_stream(body: str) -> tuple[dict[str, Any] | None, str | None]:
    """Rebuild a whole message from a recorded event stream.

    Returns (message, error): the message has the same shape as a non-streamed
    response; `error` is set when the stream carried an `error` event or was cut short.
    """
    return assemble_events(iter_events(body))


def assemble_events(
    events: Iterable[tuple[str | None, Any]],
) -> tuple[dict[str, Any] | None, str | None]:
    """Rebuild a whole message from its stream events, (event name, parsed data) each.

    The one fold of Anthropic's stream events, whatever carried them: server-sent events
    (`assemble_stream`) or Bedrock InvokeModelWithResponseStream's `chunk` frames
    (`dialects.bedrock_invoke`), so both read a stream the same way."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, list[str]] = {}
    error: str | None = None
    stopped = False
    for event, data in events:
        if not isinstance(data, dict):
            continue
        kind = data.get("type") or event
        if kind == "message_start" and isinstance(data.get("message"), dict):
            message = dict(data["message"])
            message["content"] = []
            message["usage"] = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            index = int_or_zero(data.get("index"))
            block = data.get("content_block")
            blocks[index] = dict(block) if isinstance(block, dict) else {"type": "other"}
        elif kind == "content_block_delta":
            _apply_delta(blocks, partial_json, int_or_zero(data.get("index")), data.get("delta"))
        elif kind == "message_delta":
            if message is None:
                message = {"type": "message", "role": "assistant", "content": [], "usage": {}}
            delta = dict_or_empty(data.get("delta"))
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    message[key] = delta[key]
            if isinstance(data.get("usage"), dict):
                message["usage"].update({k: v for k, v in data["usage"].items() if v is not None})
        elif kind == "message_stop":
            stopped = True
        elif kind == "error":
            detail = dict_or_empty(data.get("error"))
            error = f"{detail.get('type', 'error')}: {detail.get('message', '')}".strip(": ")
    for index, pieces in partial_json.items():
        text = "".join(pieces)
        if index in blocks:
            try:
                blocks[index]["input"] = orjson.loads(text) if text.strip() else {}
            except orjson.JSONDecodeError:
                blocks[index]["input"] = text  # malformed arguments are a finding, kept as text
    if message is not None:
        message["content"] = [blocks[i] for i in sorted(blocks)]
    if error is None and message is not None and not stopped:
        error = "stream ended before message_stop (response cut short)"
    if message is None and error is None:
        error = "the event stream holds no message"
    return message, error


def assemble_pieces(body: list[Any]) -> Assembled | None:
    """Anthropic responses are never logged as lists of events: no list is a stream."""
    return None


def _apply_delta(
    blocks: dict[int, dict[str, Any]],
    partial_json: dict[int, list[str]],
    index: int,
    delta: Any,
) -> None:
    if not isinstance(delta, dict):
        return
    block = blocks.setdefault(index, {"type": "text", "text": ""})
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
    elif kind == "input_json_delta":
        partial_json.setdefault(index, []).append(str(delta.get("partial_json") or ""))
    elif kind == "thinking_delta":
        block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")
    elif kind == "signature_delta":
        block["signature"] = str(block.get("signature") or "") + str(delta.get("signature") or "")
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))


def error_text(body: Any) -> str | None:
    """The message of an API error body `{"type": "error", "error": {...}}`."""
    if isinstance(body, dict) and body.get("type") == "error":
        detail = dict_or_empty(body.get("error"))
        return f"{detail.get('type', 'error')}: {detail.get('message', '')}".strip(": ")
    return None
