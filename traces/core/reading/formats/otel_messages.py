"""What a chat span says: its request messages, response, finish reason, system prompt,
tools and model, from whichever vocabulary it uses (GenAI semantic conventions and their
deprecated names, OpenInference, Vercel AI SDK)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model import Message
from ..dialects import gemini
from ..dialects import otel_genai as otel

CONTENT_PREFIXES: tuple[str, ...] = ("gen_ai.prompt.", "gen_ai.completion.", "llm.input_messages.")
CONTENT_PREFIXES += ("llm.output_messages.", "llm.tools.")
CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.prompt",
    "gen_ai.completion",
    "ai.prompt.messages",
    "ai.prompt.tools",
    "ai.response.text",
    "ai.response.toolCalls",
    "ai.response.object",
    "ai.response.reasoning",
    "input.value",
    "output.value",
}
"""Attributes read into messages, system or tools: not repeated in `extra`."""


# -- what a chat span says ----------------------------------------------------------------
def input_messages(attrs: Mapping[str, Any]) -> list[Any]:
    """The request's messages, from whichever vocabulary the span uses."""
    for key in ("gen_ai.input.messages", "gen_ai.prompt", "ai.prompt.messages"):
        value = otel.parse_json(attrs.get(key))
        if isinstance(value, list):
            return value
    for prefix in ("gen_ai.prompt", "llm.input_messages"):
        items = otel.unflatten(attrs, prefix)
        if items:
            return [_unwrap(item) for item in items]
    value = otel.parse_json(attrs.get("input.value"))
    if isinstance(value, list):
        return value
    messages = value.get("messages") if isinstance(value, dict) else None
    if isinstance(messages, list):
        return messages
    if isinstance(value, str) and value:
        return [{"role": "user", "content": value}]
    return []


def output_messages(attrs: Mapping[str, Any]) -> tuple[list[Any], Any]:
    """The response's messages, and a finish reason found beside them."""
    value = otel.parse_json(attrs.get("gen_ai.output.messages"))
    if isinstance(value, list):
        return _joined_gemini_chunks(value), None
    if isinstance(value, dict) and otel.is_gemini_content(value):
        return [value], None  # Gemini CLI: the candidate's content of a whole response
    completion = otel.parse_json(attrs.get("gen_ai.completion"))
    if completion is not None:
        return _output_object(completion)
    for prefix in ("gen_ai.completion", "llm.output_messages"):
        items = otel.unflatten(attrs, prefix)
        if items:
            return [_unwrap(item) for item in items], None
    vercel = _vercel_response(attrs)
    if vercel is not None:
        return [vercel], None
    output = otel.parse_json(attrs.get("output.value"))
    if output is not None:
        return _output_object(output)
    return [], None


def _joined_gemini_chunks(values: list[Any]) -> list[Any]:
    """Gemini CLI writes a streamed response as each chunk's content (`null` for a chunk
    without one): joined into one model message, text pieces of a kind run together."""
    contents = [v for v in values if v is not None]
    if not contents or not all(
        isinstance(v, dict) and v.get("role") == "model" and otel.is_gemini_content(v)
        for v in contents
    ):
        return values
    if len(contents) == 1:
        return contents
    parts: list[dict[str, Any]] = []
    for content in contents:
        for part in content["parts"]:
            gemini.append_part(parts, part)
    return [{"role": "model", "parts": parts}]


def _output_object(value: Any) -> tuple[list[Any], Any]:
    """An output written as one value: a chat completion, `{text, finish_reason}`, text."""
    if isinstance(value, list):
        return value, None
    if isinstance(value, str):
        return ([{"role": "assistant", "content": value}] if value else []), None
    if not isinstance(value, dict):
        return [], None
    if isinstance(value.get("choices"), list):
        choices = [c for c in value["choices"] if isinstance(c, dict)]
        finish = choices[0].get("finish_reason") if choices else None
        return [c["message"] for c in choices if isinstance(c.get("message"), dict)], finish
    if "role" in value or "parts" in value or "content" in value:
        return [value], value.get("finish_reason")
    if isinstance(value.get("text"), str):
        return [{"role": "assistant", "content": value["text"]}], value.get("finish_reason")
    return [], value.get("finish_reason")


def _vercel_response(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Vercel AI SDK's `ai.response.*` attributes as one assistant message."""
    content: list[dict[str, Any]] = []
    reasoning = attrs.get("ai.response.reasoning")
    if isinstance(reasoning, str) and reasoning:
        content.append({"type": "reasoning", "text": reasoning})
    for key in ("ai.response.text", "ai.response.object"):
        if isinstance(attrs.get(key), str):
            content.append({"type": "text", "text": attrs[key]})
    calls = otel.parse_json(attrs.get("ai.response.toolCalls"))
    if isinstance(calls, list):
        content.extend({"type": "tool-call", **c} for c in calls if isinstance(c, dict))
    return {"role": "assistant", "content": content} if content else None


def _unwrap(item: Any) -> Any:
    """OpenInference nests each flattened message under `message`."""
    if isinstance(item, dict) and isinstance(item.get("message"), dict) and len(item) == 1:
        return item["message"]
    return item


def response_message(outputs: list[Any]) -> Message | None:
    if not outputs:
        return None
    blocks = tuple(b for raw in outputs for b in otel.normalize_message(raw).blocks)
    return Message("assistant", blocks)


def finish_reason(attrs: Mapping[str, Any], outputs: list[Any], beside: Any) -> Any:
    for message in outputs:
        if isinstance(message, dict) and message.get("finish_reason"):
            return message["finish_reason"]
    reasons = attrs.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, list) and reasons:
        return reasons[0]
    if isinstance(reasons, str):
        parsed = otel.parse_json(reasons)
        return parsed[0] if isinstance(parsed, list) and parsed else parsed
    for key in ("ai.response.finishReason", "anthropic.message.stop_reason", "llm.finish_reason"):
        if attrs.get(key):
            return attrs[key]
    if beside is not None:
        return beside
    output = otel.parse_json(attrs.get("output.value"))
    if not isinstance(output, dict):
        return None
    # OpenInference keeps the provider's whole response in output.value: an Anthropic
    # message says `stop_reason`, a Chat Completion says it per choice.
    choices = output.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else {}
    return (
        output.get("finish_reason")
        or output.get("stop_reason")
        or (first.get("finish_reason") if isinstance(first, dict) else None)
    )


def system_of(attrs: Mapping[str, Any], messages: list[Any]) -> str | None:
    """`gen_ai.system_instructions`, else the text of the system messages (kept there too)."""
    instructions = otel.system_text(attrs.get("gen_ai.system_instructions"))
    if instructions is not None:
        return instructions
    texts = [
        block.text
        for raw in messages
        if isinstance(raw, dict) and raw.get("role") in ("system", "developer")
        for block in otel.normalize_message(raw).blocks
        if block.kind == "text"
    ]
    return "\n\n".join(texts) if texts else None


def tool_definitions(attrs: Mapping[str, Any]) -> list[Any]:
    value = otel.parse_json(attrs.get("gen_ai.tool.definitions"))
    if isinstance(value, list):
        return gemini.tools_of({"tools": value})  # Gemini's `functionDeclarations` flattened
    listed = otel.unflatten(attrs, "llm.tools")
    if listed:
        return [_tool_schema(item) for item in listed]
    vercel = attrs.get("ai.prompt.tools")
    if isinstance(vercel, list):
        return [otel.parse_json(item) for item in vercel]
    return []


def _tool_schema(item: Any) -> Any:
    tool = item.get("tool") if isinstance(item, dict) else None
    if isinstance(tool, dict) and "json_schema" in tool:
        return otel.parse_json(tool["json_schema"])
    return tool if tool is not None else item


def model_of(attrs: Mapping[str, Any]) -> str | None:
    model = otel.first(
        attrs,
        "gen_ai.response.model",
        "gen_ai.request.model",
        "llm.model_name",
        "ai.response.model",
        "ai.model.id",
    )
    return model if isinstance(model, str) else None
