"""OpenTelemetry GenAI span attributes: messages, tool calls and token usage.

Three vocabularies describe one model call on a span, and instrumentations mix them:
- the GenAI semantic conventions: `gen_ai.input.messages` / `gen_ai.output.messages`
  (JSON strings of `{role, parts: [{type: text | tool_call | tool_call_response …}]}`),
  `gen_ai.system_instructions`, `gen_ai.tool.definitions`, `gen_ai.usage.*_tokens`
  (input includes `gen_ai.usage.cache_read.input_tokens` and cache creation), and the
  deprecated flattened `gen_ai.prompt.<i>.role/content` and `gen_ai.completion.<i>…`;
- OpenInference: `llm.input_messages.<i>.message.role/content/contents/tool_calls…`,
  `llm.output_messages…`, `llm.token_count.prompt/completion/prompt_details.cache_read`;
- the Vercel AI SDK: `ai.prompt.messages` (`{type: "tool-call" | "tool-result"}` parts),
  `ai.response.text/toolCalls`, `ai.usage.*`.
This module reads all of them into the provider-neutral model; tool ids are kept exactly
as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...coerce import parse_arguments, str_or_none
from ...model import Block, Message, Usage
from . import anthropic, gemini

INPUT_TOKEN_KEYS = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
    "ai.usage.inputTokens",
    "ai.usage.promptTokens",
)
OUTPUT_TOKEN_KEYS = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
    "ai.usage.outputTokens",
    "ai.usage.completionTokens",
)
CACHE_READ_KEYS = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "gen_ai.usage.input_tokens.cached",
    "llm.token_count.prompt_details.cache_read",
    "ai.usage.cachedInputTokens",
    "ai.usage.inputTokenDetails.cacheReadTokens",
)
CACHE_WRITE_KEYS = (
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "gen_ai.usage.input_tokens.cache_write",
    "llm.token_count.prompt_details.cache_write",
    "ai.usage.inputTokenDetails.cacheWriteTokens",
)
STOP_REASONS = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "tool_calls": "tool_use",
    "tool_call": "tool_use",
    "tool-calls": "tool_use",
    "function_call": "tool_use",
    "tool_use": "tool_use",
    "length": "max_tokens",
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "max_tokens": "max_tokens",
}


# -- attribute values ---------------------------------------------------------------------
def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` ({stringValue | intValue | arrayValue …}) as a Python value."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        number = value["intValue"]
        try:
            return int(number)
        except (TypeError, ValueError):
            return number
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        items = value["arrayValue"].get("values") if isinstance(value["arrayValue"], dict) else []
        return [any_value(item) for item in items or []]
    if "kvlistValue" in value:
        entries = value["kvlistValue"]
        return attributes(entries.get("values") if isinstance(entries, dict) else [])
    if "bytesValue" in value:
        return value["bytesValue"]
    return value if value else None


def attributes(raw: Any) -> dict[str, Any]:
    """Attributes as a flat dict, from OTLP's `[{key, value}]` list or a plain mapping."""
    if isinstance(raw, dict):
        return dict(raw)
    if not isinstance(raw, list):
        return {}
    flat: dict[str, Any] = {}
    for entry in raw:
        if isinstance(entry, dict) and isinstance(entry.get("key"), str):
            flat[entry["key"]] = any_value(entry.get("value"))
    return flat


def parse_json(value: Any) -> Any:
    """Attributes hold JSON as strings; anything that is not JSON is returned as is."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def unflatten(attrs: Mapping[str, Any], prefix: str) -> list[Any]:
    """The list an instrumentation flattened into `<prefix>.<i>.<path>` attributes."""
    root: dict[str, Any] = {}
    head = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        parts = key[len(head) :].split(".")
        node = root
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    rebuilt = _listify(root)
    return rebuilt if isinstance(rebuilt, list) else []


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(key.isdigit() for key in node):
        return [_listify(node[key]) for key in sorted(node, key=int)]
    return {key: _listify(value) for key, value in node.items()}


def first(attrs: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first key present (not None)."""
    for key in keys:
        value = attrs.get(key)
        if value is not None:
            return value
    return None


# -- messages -----------------------------------------------------------------------------
def normalize_message(raw: Any) -> Message:
    """One message in any of the span vocabularies (parts, content lists, tool_calls)."""
    if isinstance(raw, str):
        return Message("user", (Block("text", text=raw, raw=raw),))
    if not isinstance(raw, dict):
        return Message("unknown", (Block("other", text=str(raw), raw=raw),))
    role = str(raw.get("role") or "unknown")
    blocks: list[Block] = []
    if isinstance(raw.get("parts"), list):
        if is_gemini_content(raw):  # Gemini CLI writes `contents` as they were sent
            return gemini.normalize_content(raw)
        blocks.extend(_part_block(part) for part in raw["parts"])
    blocks.extend(_content_blocks(raw))
    if isinstance(raw.get("contents"), list):
        blocks.extend(_openinference_content(item) for item in raw["contents"])
    if isinstance(raw.get("tool_calls"), list):
        blocks.extend(_tool_call_block(call) for call in raw["tool_calls"])
    return Message(role, tuple(blocks))


GEMINI_PART_KEYS = frozenset(
    {"text", "functionCall", "functionResponse", "inlineData", "fileData", "thought"}
    | {"thoughtSignature", "executableCode", "codeExecutionResult"}
)


def is_gemini_content(raw: dict[str, Any]) -> bool:
    """A Gemini `Content` (`{role: user | model, parts: [{text} | {functionCall} …]}`),
    not a semantic-conventions message (whose parts have a `type`)."""
    parts = raw.get("parts")
    return (
        isinstance(parts, list)
        and bool(parts)
        and all(
            isinstance(p, dict) and "type" not in p and bool(GEMINI_PART_KEYS & p.keys())
            for p in parts
        )
    )


def _content_blocks(raw: dict[str, Any]) -> list[Block]:
    content = raw.get("content")
    result_id = raw.get("tool_call_id")
    if result_id is not None:
        return [
            Block("tool_result", text=result_text(content), tool_id=tool_id(result_id), raw=raw)
        ]
    if isinstance(content, str):
        blocks = _serialised_blocks(content)
        if blocks is not None:
            return [_content_block(item) for item in blocks]
        return [Block("text", text=content, raw=content)] if content else []
    if isinstance(content, list):
        return [_content_block(item) for item in content]
    if isinstance(content, dict):
        return [_content_block(content)]
    return []


BLOCK_TYPES = frozenset(
    {"text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image"}
    | {"tool-call", "tool-result", "input_text", "output_text", "reasoning"}
)
"""Content block types of the providers whose blocks instrumentations serialise."""


def _serialised_blocks(content: str) -> list[Any] | None:
    """Content written as a JSON string of provider blocks, when it is one.

    Instrumentations that flatten messages into string attributes
    (`llm.input_messages.N.message.content`, `gen_ai.prompt.N.content`) write an
    Anthropic `[{type: tool_use …}, {type: tool_result …}]` list as its JSON text; read
    as text, its tool results would pair with nothing. Only a list whose every item is a
    known content block counts: a user who typed JSON keeps their text.
    """
    if content.lstrip()[:1] != "[":
        return None
    try:
        value = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(item, dict) and item.get("type") in BLOCK_TYPES for item in value):
        return value
    return None


def _part_block(part: Any) -> Block:
    """A semantic-conventions message part."""
    if not isinstance(part, dict):
        return Block("text", text=str(part), raw=part)
    kind = part.get("type")
    if kind == "text":
        return Block("text", text=str(part.get("content") or part.get("text") or ""), raw=part)
    if kind == "tool_call":
        return Block(
            "tool_use",
            tool_id=tool_id(part.get("id")),
            name=str_or_none(part.get("name")),
            input=parse_arguments(part.get("arguments")),
            raw=part,
        )
    if kind == "tool_call_response":
        return Block(
            "tool_result",
            text=result_text(part.get("response", part.get("result"))),
            tool_id=tool_id(part.get("id")),
            raw=part,
        )
    if kind in ("reasoning", "thinking"):
        return Block("thinking", text=str(part.get("content") or part.get("text") or ""), raw=part)
    if kind in ("blob", "uri", "file", "image"):
        return Block("image", text=f"[{kind}]", raw=part)
    return Block("other", text=str(kind or "part"), raw=part)


def _content_block(item: Any) -> Block:
    """A content item: Vercel AI SDK parts, OpenAI parts or Anthropic blocks."""
    if not isinstance(item, dict):
        return Block("text", text=str(item), raw=item)
    kind = item.get("type")
    if kind in ("text", "input_text", "output_text"):
        return Block("text", text=str(item.get("text") or item.get("content") or ""), raw=item)
    if kind == "tool-call":
        arguments = item["input"] if "input" in item else item.get("args")
        return Block(
            "tool_use",
            tool_id=tool_id(item.get("toolCallId")),
            name=str_or_none(item.get("toolName")),
            input=parse_arguments(arguments),
            raw=item,
        )
    if kind == "tool-result":
        output = item["output"] if "output" in item else item.get("result")
        failed = bool(item.get("isError")) or (
            isinstance(output, dict) and str(output.get("type", "")).startswith("error")
        )
        return Block(
            "tool_result",
            text=result_text(output),
            tool_id=tool_id(item.get("toolCallId")),
            is_error=failed,
            raw=item,
        )
    if kind in ("tool_use", "tool_result", "thinking", "redacted_thinking"):
        return anthropic.block_from(item)
    if kind == "reasoning":
        return Block("thinking", text=str(item.get("text") or ""), raw=item)
    if kind in ("image", "image_url", "input_image", "file"):
        return Block("image", text=f"[{kind}]", raw=item)
    return Block("other", text=str(kind or "part"), raw=item)


def _openinference_content(item: Any) -> Block:
    content = item.get("message_content") if isinstance(item, dict) else None
    if not isinstance(content, dict):
        return Block("other", text="content", raw=item)
    if content.get("type") == "image":
        return Block("image", text="[image]", raw=item)
    return Block("text", text=str(content.get("text") or ""), raw=item)


def _tool_call_block(call: Any) -> Block:
    """`{id, function: {name, arguments}}`, OpenInference `{tool_call: …}`, or flat."""
    if isinstance(call, dict) and isinstance(call.get("tool_call"), dict):
        call = call["tool_call"]
    if not isinstance(call, dict):
        return Block("other", text="tool_call", raw=call)
    function = call["function"] if isinstance(call.get("function"), dict) else call
    return Block(
        "tool_use",
        tool_id=tool_id(call.get("id")),
        name=str_or_none(function.get("name")),
        input=parse_arguments(function.get("arguments")),
        raw=call,
    )


def result_text(value: Any) -> str:
    """A tool result as the text the model saw."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, dict) and value.get("type") in ("text", "error-text"):
        return str(value.get("value") or "")
    if isinstance(value, dict) and value.get("type") in ("json", "error-json"):
        value = value.get("value")
    if isinstance(value, list) and all(isinstance(v, dict) and "text" in v for v in value):
        return "\n".join(str(v["text"]) for v in value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def tool_id(value: Any) -> str | None:
    """A tool call id exactly as written (numbers become their text, nothing is stripped)."""
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def system_text(value: Any) -> str | None:
    """`gen_ai.system_instructions` (parts, a string, or JSON of either) as text."""
    value = parse_json(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        # A Gemini `Content` (`{role, parts: [{text}]}`, Gemini CLI) is its parts.
        value = value["parts"] if isinstance(value.get("parts"), list) else [value]
    if isinstance(value, list):
        texts = [
            str(part.get("content") or part.get("text") or "")
            if isinstance(part, dict)
            else str(part)
            for part in value
        ]
        return "\n\n".join(text for text in texts if text) or None
    return None


def stop_reason(finish_reason: Any, has_tool_use: bool) -> str | None:
    """The canonical stop reason: end_turn, tool_use, max_tokens (others kept as is)."""
    if isinstance(finish_reason, str) and finish_reason:
        if has_tool_use and finish_reason in ("stop", "STOP"):
            return "tool_use"  # Gemini says STOP for a response with function calls
        return STOP_REASONS.get(finish_reason, finish_reason)
    return "tool_use" if has_tool_use else None


# -- usage --------------------------------------------------------------------------------
def usage_from(attrs: Mapping[str, Any]) -> Usage | None:
    """Token usage; None when the span reports none (not zeros).

    The conventions count cache reads and writes inside the input tokens, so they are
    subtracted; when the input is smaller than them the instrumentation evidently
    reported them apart, and the input is kept.
    """
    total_input = _count(first(attrs, *INPUT_TOKEN_KEYS))
    output = _count(first(attrs, *OUTPUT_TOKEN_KEYS))
    cache_read = _count(first(attrs, *CACHE_READ_KEYS))
    cache_write = _count(first(attrs, *CACHE_WRITE_KEYS))
    if total_input is None and output is None and cache_read is None and cache_write is None:
        return None
    total_input, cache_read, cache_write = total_input or 0, cache_read or 0, cache_write or 0
    cached = cache_read + cache_write
    return Usage(
        input_tokens=total_input - cached if total_input >= cached else total_input,
        output_tokens=output or 0,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None
