"""OpenAI Responses API shapes: input/output items, streamed events and usage.

Follows the Responses API reference: a request's `input` is a string or a list of items
(`message` with `input_text`/`output_text` parts, `function_call` {id "fc_…", call_id
"call_…", name, arguments as a JSON string}, `function_call_output` {call_id, output},
`reasoning`, custom/computer/shell tool calls and their outputs); a response object
`{object:"response", status, output[...], usage, incomplete_details, error}`; and the
streaming events `response.created` … `response.output_item.added/done`, the
`*.delta` events and the terminal `response.completed|incomplete|failed` (or `error`).

Tool calls are identified by `call_id` (never by the item's own `id`), because that is
what the matching `*_call_output` item quotes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...coerce import list_or_empty, non_negative, str_or_none
from ...model import Block, Message, Usage
from ..sse import iter_events
from .base import Assembled, Reply
from .openai_chat import parse_arguments, text_of
from .openai_chat import system_of as chat_system_of

TERMINAL_EVENTS = {"response.completed", "response.incomplete", "response.failed"}
INCOMPLETE_REASONS = {"max_output_tokens": "max_tokens"}


# -- items ------------------------------------------------------------------------------
def input_items(value: Any) -> list[Any]:
    """A request's `input` as a list of items; a bare string is one user message."""
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def normalize_item(raw: Any) -> Message:
    """One input or output item as a `Message`.

    A whole response object (`output[...]`) is read as one assistant message holding
    every output item, so the same function renders stored responses.
    """
    if not isinstance(raw, dict):
        return Message("unknown", (part_block(raw),))
    if isinstance(raw.get("output"), list) and "call_id" not in raw:
        return output_message(raw["output"])
    kind = raw.get("type")
    if kind == "message" or (kind is None and "role" in raw):
        return Message(str(raw.get("role") or "unknown"), _content_blocks(raw.get("content")))
    block = item_block(raw)
    role = raw.get("role")
    if not isinstance(role, str):
        role = "tool" if block.kind == "tool_result" else "assistant"
    return Message(role, (block,))


normalize_message = normalize_item
"""The adapter-facing name: every transcript entry of this dialect is one item."""


def output_message(output: Iterable[Any]) -> Message:
    """A response's output items joined into one assistant message, in order."""
    blocks: list[Block] = []
    for item in output:
        if isinstance(item, dict) and (item.get("type") == "message" or "role" in item):
            blocks.extend(_content_blocks(item.get("content")))
        else:
            blocks.append(item_block(item))
    return Message("assistant", tuple(blocks))


def item_block(item: Any) -> Block:
    """The one block a non-message item stands for."""
    if not isinstance(item, dict):
        return part_block(item)
    kind = str(item.get("type") or "")
    if kind == "reasoning":
        return _reasoning_block(item)
    if is_client_call(item):
        return _call_block(item, kind)
    if kind.endswith("_call_output") and "call_id" in item:
        return Block(
            "tool_result",
            text=_output_text(item.get("output")),
            tool_id=str_or_none(item.get("call_id")),
            is_error=item.get("status") == "failed",
            raw=item,
        )
    if kind == "message":
        return Block("text", text=text_of(item.get("content")), raw=item)
    return Block("other", text=kind or "item", raw=item)


def is_client_call(item: Any) -> bool:
    """A tool call the client must run and answer (it has a `call_id`).

    Hosted tools (`web_search_call`, `mcp_call`, `code_interpreter_call`…) run on the
    server, carry no call_id and get no output item, so they are not loop tool calls.
    """
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    return isinstance(kind, str) and kind.endswith("_call") and "call_id" in item


def _call_block(item: dict[str, Any], kind: str) -> Block:
    if "arguments" in item:
        arguments = parse_arguments(item.get("arguments"))
    elif "input" in item:
        arguments = item.get("input")
    else:
        arguments = item.get("action")
    name = item.get("name")
    if not isinstance(name, str):
        name = kind.removesuffix("_call")
    return Block(
        "tool_use",
        tool_id=str_or_none(item.get("call_id")),
        name=name,
        input=arguments,
        raw=item,
    )


def _reasoning_block(item: dict[str, Any]) -> Block:
    """Reasoning shows its summary (or full text) when present; otherwise it is hidden."""
    pieces: list[str] = []
    for key in ("summary", "content"):
        parts = item.get(key)
        if isinstance(parts, list):
            pieces.extend(
                str(p.get("text")) for p in parts if isinstance(p, dict) and p.get("text")
            )
    if pieces:
        return Block("thinking", text="\n\n".join(pieces), raw=item)
    return Block("redacted_thinking", raw=item)


def _output_text(output: Any) -> str:
    """A tool output is a string or a list of `input_text`/`input_image` parts."""
    return text_of(output)


def _content_blocks(content: Any) -> tuple[Block, ...]:
    if content is None or content == "":
        return ()
    if isinstance(content, list):
        return tuple(part_block(part) for part in content)
    return (Block("text", text=str(content), raw=content),)


def part_block(part: Any) -> Block:
    """One content part: input_text/output_text, refusal, input_image/file/audio."""
    if isinstance(part, str):
        return Block("text", text=part, raw=part)
    if not isinstance(part, dict):
        return Block("other", text=str(part), raw=part)
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text", "summary_text", "reasoning_text"):
        return Block("text", text=str(part.get("text") or ""), raw=part)
    if kind == "refusal":
        return Block("other", text=f"refusal: {part.get('refusal') or ''}", raw=part)
    if kind == "input_image":
        return Block("image", text="[image]", raw=part)
    if kind == "input_file":
        return Block("image", text="[file]", raw=part)
    return Block("other", text=str(kind or "part"), raw=part)


def system_of(instructions: Any, items: Iterable[Any]) -> Any:
    """The system prompt: `instructions`, else the leading system/developer messages."""
    if instructions not in (None, "", []):
        return instructions
    return chat_system_of(items)


# -- usage, stop reason, errors ---------------------------------------------------------
def usage_from(raw: Any) -> Usage | None:
    """Responses usage: `input_tokens` includes `input_tokens_details.cached_tokens`."""
    if not isinstance(raw, dict):
        return None
    total_input = non_negative(raw.get("input_tokens"))
    details = raw.get("input_tokens_details")
    cached = non_negative(details.get("cached_tokens")) if isinstance(details, dict) else 0
    cached = min(cached, total_input)
    return Usage(
        input_tokens=total_input - cached,
        output_tokens=non_negative(raw.get("output_tokens")),
        cache_read_tokens=cached,
    )


def stop_reason_of(body: Any) -> str | None:
    """`max_tokens` when cut off, `tool_use` when the output asks for client tools.

    A cut-off response wins over its tool calls: the last of them is then marked
    `status:"incomplete"` and its arguments are truncated.
    """
    if not isinstance(body, dict):
        return None
    status = body.get("status")
    if status == "incomplete":
        details = body.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        return INCOMPLETE_REASONS.get(reason, reason) if isinstance(reason, str) else "incomplete"
    output = list_or_empty(body.get("output"))
    if any(is_client_call(item) for item in output):
        return "tool_use"
    if status in ("failed", "cancelled", "queued", "in_progress"):
        return None
    return "end_turn"


def read_response(body: Any, messages: Sequence[Any] = ()) -> Reply:
    """A response object (or a reassembled stream) as (Message, stop_reason, Usage)."""
    if not isinstance(body, dict):
        return Reply(Message("assistant", ()), None, None)
    output = list_or_empty(body.get("output"))
    return Reply(output_message(output), stop_reason_of(body), usage_from(body.get("usage")))


def error_text(body: Any) -> str | None:
    """Why a response failed: an HTTP error body, a `status:"failed"` response, an event."""
    if not isinstance(body, dict):
        return None
    detail = body.get("error")
    if body.get("object") == "response" or "output" in body:
        if body.get("status") != "failed":
            return None
        return _describe(detail) or "the response failed"
    if body.get("type") == "error" and detail is None:
        return _describe(body)
    if detail is None:
        return None
    return _describe(detail) if isinstance(detail, dict) else str(detail)


def _describe(detail: Any) -> str | None:
    if not isinstance(detail, dict):
        return None
    label = detail.get("code") or detail.get("type") or "error"
    message = detail.get("message") or ""
    return f"{label}: {message}" if message else str(label)


# -- streams ----------------------------------------------------------------------------
def assemble_stream(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Rebuild the response object from recorded `response.*` events.

    The terminal event carries the whole response; without one, the output is rebuilt
    from the item and delta events and the call is reported as cut short.
    """
    return assemble_events(data for _event, data in iter_events(text))


def is_stream_event(value: Any) -> bool:
    """One `response.*` streaming event (as logged one per line, or in a list)."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    return (
        isinstance(kind, str)
        and kind.startswith("response.")
        and ("sequence_number" in value or "response" in value or "output_index" in value)
    )


def assemble_pieces(body: list[Any]) -> Assembled | None:
    """A response logged as the list of its `response.*` events."""
    if body and is_stream_event(body[0]):
        return assemble_events(body)
    return None


def assemble_events(events: Iterable[Any]) -> tuple[dict[str, Any] | None, str | None]:
    stream = _StreamState()
    for event in events:
        if isinstance(event, dict):
            stream.add(event)
    return stream.result()


class _StreamState:
    def __init__(self) -> None:
        self.snapshot: dict[str, Any] | None = None
        self.final: dict[str, Any] | None = None
        self.items: dict[int, dict[str, Any]] = {}
        self.error: str | None = None

    def add(self, event: dict[str, Any]) -> None:
        kind = str(event.get("type") or "")
        response = event.get("response")
        if kind in TERMINAL_EVENTS and isinstance(response, dict):
            self.final = response
        elif kind.startswith("response.") and isinstance(response, dict):
            self.snapshot = response
        elif kind == "error":
            self.error = _describe(event.get("error") or event) or "the stream carried an error"
        elif kind in ("response.output_item.added", "response.output_item.done"):
            if isinstance(event.get("item"), dict):
                self.items[_index(event)] = dict(event["item"])
        else:
            self._apply_delta(kind, event)

    def _apply_delta(self, kind: str, event: dict[str, Any]) -> None:
        delta = event.get("delta")
        if not kind.endswith(".delta") or not isinstance(delta, str):
            return
        item = self.items.setdefault(_index(event), {"type": "message", "role": "assistant"})
        if kind == "response.output_text.delta":
            _append_part(
                item, "content", non_negative(event.get("content_index")), "output_text", delta
            )
        elif kind == "response.refusal.delta":
            _append_part(
                item, "content", non_negative(event.get("content_index")), "refusal", delta
            )
        elif kind == "response.reasoning_summary_text.delta":
            _append_part(
                item, "summary", non_negative(event.get("summary_index")), "summary_text", delta
            )
        elif kind == "response.reasoning_text.delta":
            _append_part(
                item, "content", non_negative(event.get("content_index")), "reasoning_text", delta
            )
        elif kind == "response.function_call_arguments.delta":
            item["arguments"] = str(item.get("arguments") or "") + delta
        elif kind == "response.custom_tool_call_input.delta":
            item["input"] = str(item.get("input") or "") + delta

    def result(self) -> tuple[dict[str, Any] | None, str | None]:
        built = [self.items[i] for i in sorted(self.items)]
        if self.final is not None:
            body = dict(self.final)
            if not body.get("output") and built:
                body["output"] = built
            return body, self.error or error_text(body)
        if self.snapshot is None and not built:
            return None, self.error or "the event stream holds no response"
        body = dict(self.snapshot or {"object": "response"})
        body["output"] = built
        error = self.error or "stream ended before response.completed (response cut short)"
        return body, error


def _index(event: dict[str, Any]) -> int:
    return non_negative(event.get("output_index"))


def _append_part(item: dict[str, Any], key: str, index: int, part_type: str, delta: str) -> None:
    existing = item.get(key)
    parts = list(existing) if isinstance(existing, list) else []  # never edit a record
    item[key] = parts
    while len(parts) <= index:
        parts.append({"type": part_type, "text": ""})
    part = parts[index] if isinstance(parts[index], dict) else {"type": part_type, "text": ""}
    field = "refusal" if part_type == "refusal" else "text"
    part = {**part, field: str(part.get(field) or "") + delta}
    parts[index] = part
