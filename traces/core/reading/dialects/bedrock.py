"""AWS Bedrock Converse shapes: content blocks, usage, and ConverseStream events.

Converse is one envelope for every model family on Bedrock (Anthropic, Amazon Nova,
Meta, Mistral, Moonshot…): `toolUse{toolUseId, name, input}` in assistant messages,
`toolResult{toolUseId, content, status}` in user messages (status `error` is the error
flag), `reasoningContent` for thinking. A ConverseStream response is a sequence of events
(`messageStart`, `contentBlockStart`/`Delta`/`Stop`, `messageStop`, `metadata`) that
`assemble_events` folds back into a Converse response.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ...coerce import dict_or_empty, non_negative, parse_arguments, str_or_none
from ...model import Block, Message, Usage
from .base import Assembled, Reply
from .pydantic_ai import is_retry_prompt

EXCEPTION_TYPES = {"exception", "error"}


# -- messages ---------------------------------------------------------------------------
def normalize_message(raw: Any) -> Message:
    """One Converse message `{role, content: [blocks]}` (or a whole response) as a `Message`."""
    if isinstance(raw, dict) and isinstance(raw.get("output"), dict):
        raw = raw["output"].get("message") or {}
    if not isinstance(raw, dict):
        return Message("unknown", (Block("other", text=str(raw), raw=raw),))
    content = raw.get("content")
    if isinstance(content, str):
        blocks: tuple[Block, ...] = (Block("text", text=content, raw=content),)
    elif isinstance(content, list):
        blocks = tuple(_block(block) for block in content)
    else:
        blocks = ()
    return Message(str(raw.get("role") or "unknown"), blocks)


def _block(block: Any) -> Block:
    if not isinstance(block, dict):
        return Block("other", text=str(block), raw=block)
    if isinstance(block.get("text"), str):
        return Block("text", text=block["text"], raw=block)
    if isinstance(block.get("toolUse"), dict):
        use = block["toolUse"]
        return Block(
            "tool_use",
            tool_id=str_or_none(use.get("toolUseId")),
            name=str_or_none(use.get("name")),
            input=use.get("input"),
            raw=block,
        )
    if isinstance(block.get("toolResult"), dict):
        result = block["toolResult"]
        text = result_text(result.get("content"))
        return Block(
            "tool_result",
            text=text,
            tool_id=str_or_none(result.get("toolUseId")),
            is_error=result.get("status") == "error" or is_retry_prompt(text),
            raw=block,
        )
    if isinstance(block.get("reasoningContent"), dict):
        reasoning = block["reasoningContent"]
        if reasoning.get("redactedContent") is not None:
            return Block("redacted_thinking", text="[redacted reasoning]", raw=block)
        said = reasoning.get("reasoningText")
        said = said.get("text") if isinstance(said, dict) else said
        return Block("thinking", text=said if isinstance(said, str) else "", raw=block)
    for kind in ("image", "document", "video"):
        if isinstance(block.get(kind), dict):
            label = block[kind].get("format") or kind
            return Block("image" if kind == "image" else "other", text=f"[{label}]", raw=block)
    keys = ", ".join(sorted(map(str, block)))
    return Block("other", text=f"[{keys}]", raw=block)


def result_text(content: Any) -> str:
    """A `toolResult.content` list (`text`, `json`, images, documents) as text."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces = []
    for item in content:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            pieces.append(item["text"])
        elif "json" in item:
            pieces.append(orjson.dumps(item["json"]).decode())
        else:
            pieces.append(f"[{', '.join(sorted(map(str, item)))}]")
    return "\n".join(pieces)


def system_of(body: dict[str, Any]) -> Any:
    system = body.get("system")
    if isinstance(system, list):
        texts = [
            b["text"] for b in system if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return system


def tools_of(body: dict[str, Any]) -> list[Any]:
    """`toolConfig.tools`: each `toolSpec` as one tool; cache points stay as they are."""
    config = body.get("toolConfig")
    tools = config.get("tools") if isinstance(config, dict) else None
    if not isinstance(tools, list):
        return []
    return [t["toolSpec"] if isinstance(t, dict) and "toolSpec" in t else t for t in tools]


# -- responses --------------------------------------------------------------------------
def read_response(body: dict[str, Any], messages: Sequence[Any] = ()) -> Reply | None:
    """A Converse response `{output.message, stopReason, usage}` as the canonical reply."""
    output = body.get("output")
    message = output.get("message") if isinstance(output, dict) else None
    if not isinstance(message, dict):
        return None
    normalized = normalize_message({"role": "assistant", **message})
    stop = str_or_none(body.get("stopReason"))
    return Reply(normalized, stop, usage_from(body.get("usage")))


def usage_from(raw: Any) -> Usage | None:
    """Converse usage: `inputTokens` excludes cache reads and writes (as Anthropic's);
    older responses name the cache fields `…InputTokenCount`."""
    if not isinstance(raw, dict):
        return None
    read = raw.get("cacheReadInputTokens", raw.get("cacheReadInputTokenCount"))
    write = raw.get("cacheWriteInputTokens", raw.get("cacheWriteInputTokenCount"))
    return Usage(
        input_tokens=non_negative(raw.get("inputTokens")),
        output_tokens=non_negative(raw.get("outputTokens")),
        cache_read_tokens=non_negative(read),
        cache_write_tokens=non_negative(write),
    )


def error_text(body: Any) -> str | None:
    """An error body (`{"message"}`, with `__type` on some), or a stream's exception."""
    if not isinstance(body, dict) or "output" in body:
        return None
    message = body.get("message", body.get("Message"))
    if not isinstance(message, str):
        return None
    kind = body.get("__type") or body.get("exception")
    return f"{str(kind).split('#')[-1]}: {message}" if kind else message


def model_of_url(url: str) -> str | None:
    """The model id in `/model/{id}/converse[-stream]` (URL-encoded there)."""
    from urllib.parse import unquote

    marker = "/model/"
    start = url.find(marker)
    if start < 0:
        return None
    rest = url[start + len(marker) :]
    model = rest.split("/")[0].split("?")[0]
    return unquote(model) or None


# -- streams ----------------------------------------------------------------------------
def event_of(frame: Any) -> tuple[str | None, Any]:
    """(event type, payload) of a decoded event-stream frame, or of a boto3-style event
    `{"contentBlockDelta": {...}}`; exceptions come as ('exception', payload)."""
    if not isinstance(frame, dict):
        return None, None
    if ":message-type" in frame or ":event-type" in frame or "payload" in frame:
        if frame.get(":message-type") in EXCEPTION_TYPES:
            payload = frame.get("payload")
            kind = frame.get(":exception-type") or frame.get(":error-code") or "exception"
            text = payload.get("message") if isinstance(payload, dict) else payload
            return "exception", {"exception": kind, "message": str(text or kind)}
        return str_or_none(frame.get(":event-type")), frame.get("payload")
    if "truncated" in frame:
        return "truncated", frame
    if len(frame) == 1:
        ((kind, payload),) = frame.items()
        if kind.endswith("Exception"):
            text = payload.get("message") if isinstance(payload, dict) else payload
            return "exception", {"exception": kind, "message": str(text or kind)}
        return kind, payload
    return None, None


def assemble_stream(text: str) -> Assembled:
    """ConverseStream is binary: a text stream here means the body was mangled."""
    return None, "the response is text, not a Bedrock event stream"


def assemble_pieces(body: list[Any]) -> Assembled | None:
    """A ConverseStream response: decoded event-stream frames or boto3-style events."""
    return assemble_events(body) if is_event_list(body) else None


def is_event_list(body: Any) -> bool:
    return isinstance(body, list) and bool(body) and event_of(body[0])[0] is not None


def assemble_events(events: Sequence[Any]) -> tuple[dict[str, Any] | None, str | None]:
    """ConverseStream events folded into a Converse response.

    Blocks are keyed by `contentBlockIndex`: a text block may have no `contentBlockStart`
    (only tool use has one), tool input arrives as JSON string fragments, reasoning as
    text and signature deltas. An exception event or a cut stream makes the call failed.
    """
    blocks: dict[int, dict[str, Any]] = {}
    tool_inputs: dict[int, str] = {}
    response: dict[str, Any] = {}
    role = "assistant"
    problem: str | None = None
    finished = False
    for frame in events:
        kind, payload = event_of(frame)
        payload = payload if isinstance(payload, dict) else {}
        index = non_negative(payload.get("contentBlockIndex"))
        if kind == "messageStart":
            role = str(payload.get("role") or role)
        elif kind == "contentBlockStart":
            start = dict_or_empty(payload.get("start"))
            use = start.get("toolUse")
            if isinstance(use, dict):
                blocks[index] = {"toolUse": {**use, "input": {}}}
                tool_inputs[index] = ""
        elif kind == "contentBlockDelta":
            _apply_delta(blocks, tool_inputs, index, payload.get("delta"))
        elif kind == "messageStop":
            finished = True
            response["stopReason"] = payload.get("stopReason")
            if payload.get("additionalModelResponseFields") is not None:
                response["additionalModelResponseFields"] = payload["additionalModelResponseFields"]
        elif kind == "metadata":
            for key in ("usage", "metrics", "trace"):
                if key in payload:
                    response[key] = payload[key]
        elif kind == "exception":
            return payload, None
        elif kind == "truncated":
            problem = str(frame.get("truncated"))
    for index, text in tool_inputs.items():
        blocks[index]["toolUse"]["input"] = parse_arguments(text, blank_is_empty=True)
    content = [blocks[i] for i in sorted(blocks)]
    response["output"] = {"message": {"role": role, "content": content}}
    if problem is None and not finished:
        problem = "the stream ended before messageStop"
    return response, problem


def _apply_delta(
    blocks: dict[int, dict[str, Any]], tool_inputs: dict[int, str], index: int, delta: Any
) -> None:
    if not isinstance(delta, dict):
        return
    if isinstance(delta.get("text"), str):
        block = blocks.setdefault(index, {"text": ""})
        block["text"] = str(block.get("text", "")) + delta["text"]
    elif isinstance(delta.get("toolUse"), dict):
        if index not in blocks:  # a delta with no start: keep the input, name unknown
            blocks[index] = {"toolUse": {"toolUseId": None, "name": None, "input": {}}}
        tool_inputs[index] = tool_inputs.get(index, "") + str(delta["toolUse"].get("input") or "")
    elif isinstance(delta.get("reasoningContent"), dict):
        reasoning = delta["reasoningContent"]
        block = blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
        target = block.setdefault("reasoningContent", {})
        if "redactedContent" in reasoning:
            target["redactedContent"] = reasoning["redactedContent"]
            return
        text = target.setdefault("reasoningText", {"text": ""})
        if isinstance(reasoning.get("text"), str):
            text["text"] = str(text.get("text", "")) + reasoning["text"]
        if isinstance(reasoning.get("signature"), str):
            text["signature"] = reasoning["signature"]
