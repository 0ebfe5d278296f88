"""OpenAI Chat Completions shapes: messages, tool calls, streamed chunks and usage.

Follows the Chat Completions API reference: request `messages` with roles
system/developer/user/assistant/tool (and the legacy `function`), assistant `tool_calls`
whose `function.arguments` is a JSON *string*, `role:"tool"` results carrying
`tool_call_id`, responses `{object:"chat.completion", choices[{message, finish_reason}],
usage}`, and streams of `chat.completion.chunk` objects whose `delta.tool_calls[index]`
carry the id and name once and the arguments as string fragments.

Public API (other adapters that meet Chat-shaped messages use it too):
`normalize_message(raw) -> Message`, `usage_from(raw) -> Usage | None`,
`read_response(body) -> (Message, stop_reason, Usage | None)`, `assemble_stream(text)`
and `assemble_chunks(chunks)` that turn a stream into a completion body (the `Dialect`
of `dialects.base`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...coerce import dict_or_empty, non_negative, str_or_none
from ...coerce import parse_arguments as _parse_arguments
from ...coerce import text_of as _text_of
from ...model import Block, Message, Usage
from ..sse import iter_events
from .base import Assembled, Reply
from .pydantic_ai import is_retry_prompt

RESULT_ROLES = {"tool", "function"}
SYSTEM_ROLES = {"system", "developer"}
STOP_REASONS = {
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "stop": "end_turn",
    "length": "max_tokens",
}
"""finish_reason -> the canonical (Anthropic-style) stop reason the summary reads."""


# -- messages ---------------------------------------------------------------------------
def normalize_message(raw: Any, read_part: Callable[[Any], Block] | None = None) -> Message:
    """One Chat message `{role, content, tool_calls?, tool_call_id?}` as a `Message`.

    A whole completion body (`choices[...]`) is read as its first choice's message, so the
    same function renders stored responses. `read_part` reads content parts where a
    transcript mixes in another dialect's parts (message-list transcripts).
    """
    read_part = read_part or part_block
    if not isinstance(raw, dict):
        return Message("unknown", (read_part(raw),))
    choice_message = _first_choice_message(raw)
    if choice_message is not None:
        raw = choice_message
    role = str(raw.get("role") or "unknown")
    if role in RESULT_ROLES:
        return Message(role, (_result_block(raw),))
    blocks: list[Block] = []
    reasoning = _reasoning_text(raw)
    if reasoning:
        blocks.append(Block("thinking", text=reasoning, raw={"reasoning": reasoning}))
    blocks.extend(_content_blocks(raw.get("content"), read_part))
    refusal = raw.get("refusal")
    if isinstance(refusal, str) and refusal:
        blocks.append(Block("other", text=f"refusal: {refusal}", raw={"refusal": refusal}))
    tool_calls = raw.get("tool_calls")
    if isinstance(tool_calls, list):
        blocks.extend(tool_use_block(call) for call in tool_calls)
    legacy_call = raw.get("function_call")
    if isinstance(legacy_call, dict):
        blocks.append(_legacy_call_block(legacy_call))
    if raw.get("audio") is not None:
        blocks.append(Block("other", text="[audio]", raw=raw.get("audio")))
    return Message(role, tuple(blocks))


def _first_choice_message(raw: dict[str, Any]) -> dict[str, Any] | None:
    choices = raw.get("choices")
    if ("role" in raw and "content" in raw) or not isinstance(choices, list) or not choices:
        return None
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return None
    return {"role": "assistant", **message}


def _reasoning_text(raw: dict[str, Any]) -> str:
    """Reasoning some OpenAI-compatible servers return (DeepSeek, vLLM, OpenRouter)."""
    for key in ("reasoning_content", "reasoning"):
        value = raw.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _content_blocks(content: Any, read_part: Callable[[Any], Block]) -> list[Block]:
    if content is None or content == "":
        return []
    if isinstance(content, list):
        return [read_part(part) for part in content]
    return [Block("text", text=str(content), raw=content)]


def part_block(part: Any) -> Block:
    """One content part: text, image_url, input_audio, file or refusal."""
    if isinstance(part, str):
        return Block("text", text=part, raw=part)
    if not isinstance(part, dict):
        return Block("other", text=str(part), raw=part)
    kind = part.get("type")
    if kind == "text" or (kind is None and isinstance(part.get("text"), str)):
        return Block("text", text=str(part.get("text") or ""), raw=part)
    if kind == "image_url":
        return Block("image", text="[image]", raw=part)
    if kind == "file":
        return Block("image", text="[file]", raw=part)
    if kind == "refusal":
        return Block("other", text=f"refusal: {part.get('refusal') or ''}", raw=part)
    if kind == "input_audio":
        return Block("other", text="[audio]", raw=part)
    return Block("other", text=str(kind or "part"), raw=part)


def _result_block(raw: dict[str, Any]) -> Block:
    """A `role:"tool"` message is one tool result, paired by `tool_call_id` as written.

    The API has no error flag; a pydantic-ai retry prompt is the one error it marks."""
    text = text_of(raw.get("content"))
    return Block(
        "tool_result",
        text=text,
        tool_id=str_or_none(raw.get("tool_call_id")),
        name=str_or_none(raw.get("name")),
        is_error=is_retry_prompt(text),
        raw=raw,
    )


def tool_use_block(call: Any) -> Block:
    """One entry of `tool_calls`: a function call (arguments a JSON string) or custom call."""
    if not isinstance(call, dict):
        return Block("other", text="malformed tool call", raw=call)
    if isinstance(call.get("custom"), dict):
        custom = call["custom"]
        return Block(
            "tool_use",
            tool_id=str_or_none(call.get("id")),
            name=str_or_none(custom.get("name")),
            input=custom.get("input"),
            raw=call,
        )
    function = dict_or_empty(call.get("function"))
    return Block(
        "tool_use",
        tool_id=str_or_none(call.get("id")),
        name=str_or_none(function.get("name")),
        input=parse_arguments(function.get("arguments")),
        raw=call,
    )


def _legacy_call_block(call: dict[str, Any]) -> Block:
    """The pre-tools `function_call`: it has no id, so it cannot be paired by id."""
    return Block(
        "tool_use",
        tool_id=None,
        name=str_or_none(call.get("name")),
        input=parse_arguments(call.get("arguments")),
        raw=call,
    )


def system_of(messages: Iterable[Any]) -> Any:
    """The system prompt: the content of the leading system/developer messages.

    Only the messages before the first user/assistant turn count (reading every message
    of every request would cost quadratic time on long loops); a system note injected
    later stays visible where it was sent.
    """
    contents = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in SYSTEM_ROLES:
            break
        contents.append(message.get("content"))
    if not contents:
        return None
    return contents[0] if len(contents) == 1 else contents


# -- usage and stop reasons -------------------------------------------------------------
def usage_from(raw: Any) -> Usage | None:
    """Chat usage: `prompt_tokens` includes cached tokens, so the cached part is subtracted."""
    if not isinstance(raw, dict):
        return None
    prompt = non_negative(raw.get("prompt_tokens", raw.get("input_tokens")))
    completion = non_negative(raw.get("completion_tokens", raw.get("output_tokens")))
    details = raw.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cached = non_negative(details.get("cached_tokens", raw.get("prompt_cache_hit_tokens")))
    cached = min(cached, prompt)
    return Usage(input_tokens=prompt - cached, output_tokens=completion, cache_read_tokens=cached)


def stop_reason_from(finish_reason: Any, message: Message | None = None) -> str | None:
    """The canonical stop reason.

    With a forced `tool_choice` the API reports `finish_reason:"stop"` although the
    message carries tool calls; the loop still waits on those tools, so that is
    `tool_use`. A reply cut at `length` stays `max_tokens` even when it holds a
    (probably truncated) tool call.
    """
    if finish_reason in (None, "stop") and message is not None and message.tool_uses:
        return "tool_use"
    if not isinstance(finish_reason, str):
        return None
    return STOP_REASONS.get(finish_reason, finish_reason)


def read_response(body: Any, messages: Sequence[Any] = ()) -> Reply:
    """A completion body (or a reassembled stream) as (Message, stop_reason, Usage)."""
    if not isinstance(body, dict):
        return Reply(Message("assistant", ()), None, None)
    message = normalize_message({"role": "assistant", **_choice_message(body)})
    stop = stop_reason_from(finish_reason_of(body), message)
    return Reply(message, stop, usage_from(body.get("usage")))


def _choice_message(body: dict[str, Any]) -> dict[str, Any]:
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return message
    return {}


def finish_reason_of(body: Any) -> str | None:
    """The first choice's raw `finish_reason`, as the API wrote it."""
    if not isinstance(body, dict):
        return None
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        reason = choices[0].get("finish_reason")
        return reason if isinstance(reason, str) else None
    return None


def error_text(body: Any) -> str | None:
    """The message of an error body `{"error": {message, type, code}}` (or a bare string)."""
    if not isinstance(body, dict) or "error" not in body or body.get("error") is None:
        return None
    if "choices" in body or "output" in body:
        return None  # a successful body that merely has a null-able `error` field
    detail = body["error"]
    if isinstance(detail, str):
        return detail
    if not isinstance(detail, dict):
        return "error"
    label = detail.get("code") or detail.get("type") or "error"
    message = detail.get("message") or ""
    return f"{label}: {message}".strip(": ") if message else str(label)


# -- streams ----------------------------------------------------------------------------
def is_chunk(value: Any) -> bool:
    return isinstance(value, dict) and value.get("object") == "chat.completion.chunk"


def assemble_stream(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Rebuild a completion body from a recorded `data:` event stream.

    Returns (body, error): `error` is set when the stream carried an error or stopped
    before its last chunk.
    """
    chunks: list[Any] = []
    done = False
    for _event, data in iter_events(text):
        if data == "[DONE]":
            done = True
        else:
            chunks.append(data)
    return assemble_chunks(chunks, done=done)


def assemble_pieces(body: list[Any]) -> Assembled | None:
    """A response logged as the list of its `chat.completion.chunk` objects."""
    if body and is_chunk(body[0]):
        return assemble_chunks(body)
    return None


def assemble_chunks(
    chunks: Iterable[Any], done: bool = False
) -> tuple[dict[str, Any] | None, str | None]:
    """Join `chat.completion.chunk` objects into one `chat.completion` body.

    `done` says the `[DONE]` sentinel was seen; without it (and without any
    finish_reason) the response was cut short.
    """
    stream = _StreamState()
    for chunk in chunks:
        stream.add(chunk)
    return stream.result(done)


class _StreamState:
    """Accumulates deltas per choice; tool calls are keyed by their `index`."""

    def __init__(self) -> None:
        self.head: dict[str, Any] | None = None
        self.usage: Any = None
        self.error: str | None = None
        self.choices: dict[int, dict[str, Any]] = {}

    def add(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            return
        if chunk.get("error") is not None and "choices" not in chunk:
            self.error = error_text(chunk) or "the stream carried an error"
            return
        if self.head is None:
            self.head = {k: chunk.get(k) for k in ("id", "created", "model") if k in chunk}
            if "system_fingerprint" in chunk:
                self.head["system_fingerprint"] = chunk["system_fingerprint"]
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if isinstance(choice, dict):
                self._add_choice(choice)

    def _add_choice(self, choice: dict[str, Any]) -> None:
        given = choice.get("index")
        index = given if isinstance(given, int) else 0
        state = self.choices.setdefault(
            index, {"role": None, "text": [], "reasoning": [], "refusal": [], "calls": {}}
        )
        if choice.get("finish_reason") is not None:
            state["finish_reason"] = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        if isinstance(delta.get("role"), str):
            state["role"] = delta["role"]
        for key, target in (("content", "text"), ("refusal", "refusal")):
            if isinstance(delta.get(key), str):
                state[target].append(delta[key])
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str):
                state["reasoning"].append(delta[key])
        for call in delta.get("tool_calls") or ():
            if isinstance(call, dict):
                _add_call_delta(state["calls"], call)

    def result(self, done: bool) -> tuple[dict[str, Any] | None, str | None]:
        if self.head is None and not self.choices:
            return None, self.error or "the event stream holds no completion chunk"
        body: dict[str, Any] = {"object": "chat.completion", **(self.head or {})}
        body["choices"] = [_finish_choice(i, self.choices[i]) for i in sorted(self.choices)]
        body["usage"] = self.usage
        error = self.error
        finished = any("finish_reason" in state for state in self.choices.values())
        if error is None and not done and not finished:
            error = "stream ended before its final chunk (response cut short)"
        return body, error


def _add_call_delta(calls: dict[int, dict[str, Any]], call: dict[str, Any]) -> None:
    given = call.get("index")
    index = given if isinstance(given, int) else len(calls)
    entry = calls.setdefault(index, {"id": None, "type": "function", "name": None, "args": []})
    if isinstance(call.get("id"), str):
        entry["id"] = call["id"]
    if isinstance(call.get("type"), str):
        entry["type"] = call["type"]
    function = call.get("function")
    if isinstance(function, dict):
        if isinstance(function.get("name"), str) and function["name"]:
            entry["name"] = function["name"]
        if isinstance(function.get("arguments"), str):
            entry["args"].append(function["arguments"])


def _finish_choice(index: int, state: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": state["role"] or "assistant",
        "content": "".join(state["text"]) if state["text"] else None,
    }
    if state["reasoning"]:
        message["reasoning_content"] = "".join(state["reasoning"])
    if state["refusal"]:
        message["refusal"] = "".join(state["refusal"])
    if state["calls"]:
        message["tool_calls"] = [
            {
                "id": entry["id"],
                "type": entry["type"],
                "function": {"name": entry["name"], "arguments": "".join(entry["args"])},
            }
            for _, entry in sorted(state["calls"].items())
        ]
    return {"index": index, "message": message, "finish_reason": state.get("finish_reason")}


def text_of(content: Any) -> str:
    """Plain text of a tool message's content (a string or a list of parts)."""
    return _text_of(content, placeholder="part")


def parse_arguments(arguments: Any) -> Any:
    """Arguments as JSON when they parse; otherwise the raw string (a finding, not a crash);
    blank arguments are no arguments."""
    return _parse_arguments(arguments, blank_is_empty=True)
