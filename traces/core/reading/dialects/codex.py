"""OpenAI Codex CLI rollout items: Responses-API-shaped history items and token counts.

A rollout records the conversation as the items Codex sends to and receives from the
Responses API (`message`, `reasoning`, `function_call` {call_id, name, arguments as a
JSON string}, `function_call_output` {call_id, output}, `custom_tool_call` with a
free-text `input`, `local_shell_call`, `web_search_call`), plus `token_count` events
whose `input_tokens` include the cached ones. Items are paired by `call_id`, never by
the item `id` (`fc_…`).
"""

from __future__ import annotations

from typing import Any

from ...coerce import dict_or_empty, int_or_zero, parse_arguments, str_or_none
from ...model import Block, Message, Usage

MODEL_OUTPUT_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "image_generation_call",
        "tool_search_call",
    }
)
"""Item types only the model produces (an assistant `message` is one too)."""

TOOL_OUTPUT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
)
IGNORED_ITEMS = frozenset({"ghost_snapshot"})
"""Items Codex records for itself (undo snapshots) and never sends to the model."""


def is_model_output(item: Any) -> bool:
    """True for items the model emitted: they belong to a response, not to a request."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if kind == "message":
        return item.get("role") == "assistant"
    return kind in MODEL_OUTPUT_ITEMS


def normalize_item(raw: Any) -> Message:
    """One rollout item as a canonical message (one item, one message)."""
    if not isinstance(raw, dict):
        return Message("unknown", (Block("other", text=str(raw), raw=raw),))
    kind = raw.get("type")
    if kind == "message":
        return Message(str(raw.get("role") or "unknown"), _content_blocks(raw.get("content")))
    if kind == "reasoning":
        return Message("assistant", (_reasoning_block(raw),))
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        return Message("assistant", (_tool_use_block(raw),))
    if kind in TOOL_OUTPUT_ITEMS:
        return Message("tool", (_tool_result_block(raw),))
    if kind == "web_search_call":
        return Message("assistant", (Block("other", text=web_search_text(raw), raw=raw),))
    role = raw.get("role")
    return Message(str(role or "unknown"), (Block("other", text=str(kind or "item"), raw=raw),))


def web_search_text(item: dict[str, Any]) -> str:
    """A readable line for a server-side web search (it has no call_id and no output)."""
    action = dict_or_empty(item.get("action"))
    query = action.get("query") or action.get("url") or ""
    return f"web_search_call: {query}".strip(": ")


def _content_blocks(content: Any) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (Block("text", text=content, raw=content),)
    if not isinstance(content, list):
        return ()
    blocks = []
    for part in content:
        if isinstance(part, dict):
            kind = part.get("type")
            if kind in ("input_text", "output_text", "text", "refusal"):
                text = part.get("text") if kind != "refusal" else part.get("refusal")
                blocks.append(Block("text", text=str(text or ""), raw=part))
            elif kind in ("input_image", "image"):
                blocks.append(Block("image", text="[image]", raw=part))
            else:
                blocks.append(Block("other", text=str(kind or "part"), raw=part))
        else:
            blocks.append(Block("text", text=str(part), raw=part))
    return tuple(blocks)


def _reasoning_block(raw: dict[str, Any]) -> Block:
    """Reasoning summary or text; encrypted-only reasoning is shown as redacted."""
    texts = [
        str(part.get("text") or "")
        for key in ("summary", "content")
        if isinstance(raw.get(key), list)
        for part in raw[key]
        if isinstance(part, dict) and part.get("text")
    ]
    if texts:
        return Block("thinking", text="\n\n".join(texts), raw=raw)
    return Block("redacted_thinking", raw=raw)


def _tool_use_block(raw: dict[str, Any]) -> Block:
    kind = raw.get("type")
    if kind == "function_call":
        arguments: Any = parse_arguments(raw.get("arguments"))
        name = raw.get("name")
    elif kind == "custom_tool_call":
        arguments = raw.get("input")  # free text (an apply_patch body), not JSON
        name = raw.get("name")
    else:
        arguments = raw.get("action")
        name = raw.get("name") or "local_shell"
    return Block(
        "tool_use",
        tool_id=str_or_none(raw.get("call_id")),
        name=str_or_none(name),
        input=arguments,
        raw=raw,
    )


def _tool_result_block(raw: dict[str, Any]) -> Block:
    output = raw.get("output")
    return Block(
        "tool_result",
        text=output_text(output),
        tool_id=str_or_none(raw.get("call_id")),
        is_error=output_failed(output),
        raw=raw,
    )


def output_text(output: Any) -> str:
    """The text the model saw as a tool's result."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return output_text(output.get("content", output.get("output")))
    if isinstance(output, list):
        parts = []
        for part in output:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, dict):
                parts.append(f"[{part.get('type', 'part')}]")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return "" if output is None else str(output)


def output_failed(output: Any) -> bool:
    """Whether a tool output is flagged as failed: `{content, success: false}`.

    The exit codes Codex writes into output text ("Process exited with code N", or
    `{"output", "metadata": {"exit_code"}}` JSON strings) are not flags: the builder
    marks those results as inferred errors (`inferred_errors`), and the flag for a
    failed command comes from its `exec_command_end` event.
    """
    return isinstance(output, dict) and output.get("success") is False


def usage_from(raw: Any) -> Usage | None:
    """A `last_token_usage` object: `input_tokens` includes `cached_input_tokens`."""
    if not isinstance(raw, dict):
        return None
    total_input = int_or_zero(raw.get("input_tokens"))
    cached = int_or_zero(raw.get("cached_input_tokens"))
    return Usage(
        input_tokens=max(0, total_input - cached),
        output_tokens=int_or_zero(raw.get("output_tokens")),
        cache_read_tokens=cached,
    )


def duration_seconds(value: Any) -> float | None:
    """A Rust `Duration` as serialised ({secs, nanos}), or plain seconds."""
    if isinstance(value, dict):
        secs, nanos = value.get("secs"), value.get("nanos", 0)
        if isinstance(secs, (int, float)) and isinstance(nanos, (int, float)):
            return float(secs) + float(nanos) / 1e9
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        for suffix, scale in (("ms", 1e-3), ("s", 1.0)):
            if text.endswith(suffix):
                try:
                    return float(text[: -len(suffix)]) * scale
                except ValueError:
                    return None
    return None
