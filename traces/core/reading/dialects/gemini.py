"""Google Gemini (and Vertex AI) `generateContent` shapes: contents, parts, usage, streams.

Gemini's `functionCall` parts carry no id (the API added an optional `id` that clients
may fill, and pydantic-ai fills it in the history it replays, but responses come without
one). A `functionResponse` answers the call with the same name in the model turn before
it, in order: the third `functionResponse` named `generate_topic` answers the third
`functionCall` of that name. So ids are made from that rule, the same way for a response
and for its echo in later requests: `name@P#K` is the K-th call of `name` in the model
turn at position P of the conversation's `contents`. Pairing by these ids is pairing by
name and order within the turn, and tool runs say so (`pairing: "name-order"`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from ...coerce import dict_or_empty, non_negative, str_or_none
from ...model import Block, BlockKind, Message, Usage
from ..sse import iter_events
from .base import Assembled, Reply
from .pydantic_ai import is_retry_prompt

STOP_REASONS = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "FINISH_REASON_UNSPECIFIED": None,
}
RESULT_KEYS = ("output", "result", "return_value", "content", "text")

MakeId = Callable[[dict[str, Any], str | None], str | None]
"""How a tool block gets its id: from the part (call or response) and the tool name."""


def call_id(name: str | None, turn: int | None, ordinal: int) -> str:
    """The id a name-and-order pairing gives the `ordinal`-th call of `name` in a turn."""
    where = "?" if turn is None else str(turn)
    return f"{name or '?'}@{where}#{ordinal}"


# -- messages ---------------------------------------------------------------------------
def normalize_content(raw: Any) -> Message:
    """One `Content` `{role, parts}` as a `Message`, out of context: tool blocks keep the
    id a client wrote on the part, if any (the conversation-aware reading is
    `normalize_at`). A whole response body is read as its first candidate's content,
    so stored responses render too."""
    if isinstance(raw, dict) and "candidates" in raw:
        raw = candidate_content(raw) or {"role": "model", "parts": []}
    return _message(raw, lambda part, name: str_or_none(part.get("id")))


def normalize_at(raw: Any, position: int, contents: Sequence[Any]) -> Message:
    """The content at `position` of a request's `contents` (or, with position ==
    len(contents), the response that follows them), with name-and-order ids."""
    role = raw.get("role") if isinstance(raw, dict) else None
    counts: dict[str, int] = {}
    if role == "model":
        turn: int | None = position
    else:
        turn = _previous_model_turn(contents, position)
        if turn is not None:
            for between in contents[turn + 1 : position]:
                for part in _parts(between):
                    name = _response_name(part)
                    if name is not None:
                        counts[name] = counts.get(name, 0) + 1

    def make_id(part: dict[str, Any], name: str | None) -> str:
        key = name or "?"
        counts[key] = counts.get(key, 0) + 1
        return call_id(name, turn, counts[key])

    return _message(raw, make_id)


def _previous_model_turn(contents: Sequence[Any], position: int) -> int | None:
    for index in range(min(position, len(contents)) - 1, -1, -1):
        content = contents[index]
        if isinstance(content, dict) and content.get("role") == "model":
            return index
    return None


def _parts(content: Any) -> list[Any]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else []


def _response_name(part: Any) -> str | None:
    if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
        return str_or_none(part["functionResponse"].get("name")) or "?"
    return None


def _message(raw: Any, make_id: MakeId) -> Message:
    if not isinstance(raw, dict):
        return Message("unknown", (Block("other", text=str(raw), raw=raw),))
    role = str(raw.get("role") or "user")
    role = "assistant" if role == "model" else role
    return Message(role, tuple(_block(part, make_id) for part in _parts(raw)))


def _block(part: Any, make_id: MakeId) -> Block:
    if not isinstance(part, dict):
        return Block("other", text=str(part), raw=part)
    if isinstance(part.get("functionCall"), dict):
        call = part["functionCall"]
        name = str_or_none(call.get("name"))
        return Block(
            "tool_use", tool_id=make_id(call, name), name=name, input=call.get("args"), raw=part
        )
    if isinstance(part.get("functionResponse"), dict):
        answer = part["functionResponse"]
        name = str_or_none(answer.get("name"))
        text = result_text(answer.get("response"))
        return Block(
            "tool_result",
            text=text,
            tool_id=make_id(answer, name or "?"),
            name=name,
            is_error=is_error_response(answer.get("response")) or is_retry_prompt(text),
            raw=part,
        )
    if isinstance(part.get("text"), str):
        kind: BlockKind = "thinking" if part.get("thought") is True else "text"
        return Block(kind, text=part["text"], raw=part)
    if isinstance(part.get("inlineData"), dict) or isinstance(part.get("fileData"), dict):
        data = dict_or_empty(part.get("inlineData") or part.get("fileData"))
        mime = str(data.get("mimeType") or "")
        return Block(
            "image" if mime.startswith("image/") else "other",
            text=f"[{mime or 'file'}]",
            raw=_without_data(part),
        )
    for key in ("executableCode", "codeExecutionResult"):
        if isinstance(part.get(key), dict):
            value = part[key]
            text = str(value.get("code") or value.get("output") or "")
            return Block("other", text=f"{key}: {text}", raw=part)
    if part.get("thoughtSignature") is not None and len(part) == 1:
        return Block("thinking", text="", raw=part)
    return Block("other", text=f"[{', '.join(sorted(map(str, part)))}]", raw=part)


def _without_data(part: dict[str, Any]) -> dict[str, Any]:
    """Inline bytes are not worth keeping in a block: their size says enough."""
    inline = part.get("inlineData")
    if not isinstance(inline, dict) or not isinstance(inline.get("data"), str):
        return part
    return {**part, "inlineData": {**inline, "data": f"[{len(inline['data']):,} base64 chars]"}}


def result_text(response: Any) -> str:
    """A `functionResponse.response` as text: its one output field, else its JSON."""
    if isinstance(response, dict):
        error = response.get("error")
        if isinstance(error, str):
            return error
        keys = [k for k in RESULT_KEYS if k in response]
        only = response[keys[0]] if len(response) == 1 and keys else None
        if isinstance(only, str):
            return only
    if isinstance(response, str):
        return response
    try:
        return orjson.dumps(response).decode()
    except TypeError:
        return str(response)


def is_error_response(response: Any) -> bool:
    """Gemini's convention for a failed function: the response object holds `error`."""
    return isinstance(response, dict) and response.get("error") not in (None, "", {}, [])


def system_of(body: dict[str, Any]) -> Any:
    instruction = body.get("systemInstruction", body.get("system_instruction"))
    if isinstance(instruction, dict):
        texts = [
            p["text"]
            for p in _parts(instruction)
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        return "\n".join(texts) if texts else instruction
    return instruction


def tools_of(body: dict[str, Any]) -> list[Any]:
    """Function declarations, one per tool (they come grouped in `tools[]`); other tools
    (Google Search, code execution) stay as they are."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return []
    flat: list[Any] = []
    for tool in tools:
        declarations = None
        if isinstance(tool, dict):
            declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
        if isinstance(declarations, list):
            flat.extend(declarations)
        else:
            flat.append(tool)
    return flat


# -- responses --------------------------------------------------------------------------
def candidate_content(body: Any) -> dict[str, Any] | None:
    """The first candidate's content, as a `Content` with role `model`."""
    candidates = body.get("candidates") if isinstance(body, dict) else None
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        return None
    content = candidates[0].get("content")
    if not isinstance(content, dict):
        return {"role": "model", "parts": []}
    return {**content, "role": "model"}


normalize_message = normalize_content
"""The reader-facing name: every transcript entry of this dialect is one `Content`."""


def read_response(body: dict[str, Any], messages: Sequence[Any]) -> Reply | None:
    """The first candidate as the turn after `messages` (its tool ids follow from there)."""
    content = candidate_content(body)
    if content is None:
        return None
    message = normalize_at(content, len(messages), messages)
    finish = finish_reason_of(body)
    stop: str | None
    if message.tool_uses and finish in (None, "STOP"):
        stop = "tool_use"
    elif isinstance(finish, str):
        stop = STOP_REASONS.get(finish, finish.lower())
    else:
        stop = None
    return Reply(message, stop, usage_from(body.get("usageMetadata")))


def finish_reason_of(body: Any) -> str | None:
    candidates = body.get("candidates") if isinstance(body, dict) else None
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        return str_or_none(candidates[0].get("finishReason"))
    return None


def usage_from(raw: Any) -> Usage | None:
    """`promptTokenCount` includes cached content, which is subtracted; output counts the
    model's thinking (`thoughtsTokenCount`), billed as output."""
    if not isinstance(raw, dict):
        return None
    prompt = non_negative(raw.get("promptTokenCount")) + non_negative(
        raw.get("toolUsePromptTokenCount")
    )
    cached = min(non_negative(raw.get("cachedContentTokenCount")), prompt)
    output = non_negative(raw.get("candidatesTokenCount")) + non_negative(
        raw.get("thoughtsTokenCount")
    )
    return Usage(input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)


def error_text(body: Any) -> str | None:
    """An API error body `{"error": {code, message, status}}` (a list of one on Vertex)."""
    if isinstance(body, list) and len(body) == 1:
        body = body[0]
    if not isinstance(body, dict) or not isinstance(body.get("error"), dict):
        return None
    error = body["error"]
    status = error.get("status") or error.get("code") or "error"
    return f"{status}: {error.get('message') or ''}".strip()


def assemble_pieces(body: list[Any]) -> Assembled | None:
    """Vertex without `alt=sse` answers with a JSON array of chunks (one error: an error)."""
    if error_text(body) is not None:
        return None
    return assemble_chunks(body)


def append_part(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
    """Add a streamed chunk's part to a response's parts: text continuing the text before
    it (the same kind, thought or not, and no signature to keep apart) is joined to it."""
    last = parts[-1] if parts else None
    if (
        last is not None
        and isinstance(part.get("text"), str)
        and isinstance(last.get("text"), str)
        and bool(part.get("thought")) == bool(last.get("thought"))
        and "thoughtSignature" not in part
    ):
        parts[-1] = {**last, "text": last["text"] + part["text"]}
    else:
        parts.append(dict(part))


def assemble_chunks(chunks: Sequence[Any]) -> tuple[dict[str, Any] | None, str | None]:
    """Streamed `GenerateContentResponse` chunks joined into one response.

    Text pieces of the same kind (answer or thought) are joined; function calls arrive
    whole; the last chunk's usage and finish reason are the response's.
    """
    merged: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    finish = None
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
        if isinstance(chunk.get("error"), dict):
            return chunk, None
        for key, value in chunk.items():
            if key != "candidates":
                merged[key] = value
        content = candidate_content(chunk)
        if content is None:
            continue
        finish = finish_reason_of(chunk) or finish
        for part in _parts(content):
            if isinstance(part, dict):
                append_part(parts, part)
    if not merged and not parts:
        return None, "the stream holds no response chunk"
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    merged["candidates"] = [candidate]
    problem = None if finish is not None else "the stream ended without a finish reason"
    return merged, problem


def assemble_stream(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """A recorded `?alt=sse` body: one `data:` chunk per event."""
    chunks = [data for _, data in iter_events(text) if isinstance(data, dict)]
    return assemble_chunks(chunks)
