"""VS Code Copilot Chat prompt-log exports (`*.chatreplay.json`).

Copilot Chat's chat debug view exports the prompt logs of a chat ("Export Prompt Logs as
JSON"; the extension's `@chatReplay` participant replays them) as one JSON document:
`{exportedAt, totalPrompts, totalLogEntries, prompts[{prompt, hasSeen, logCount,
logs[]}]}`. Every choice below was checked against the real export of SOURCES.md
section 25 (an agent-mode run, claude-sonnet-4 then claude-sonnet-4.5).

- A model call is one log of kind `request`: `metadata{model, usage, startTime,
  endTime, timeToFirstToken, tools}` and `requestMessages.messages[]`, the messages sent,
  with numeric roles (0 system, 1 user, 2 assistant, 3 tool) and content parts of numeric
  types (1 text, 2 image, 3 a prompt-cache breakpoint). The messages are read as Chat
  messages: parts of type 3 are dropped (the extension moves them between requests, so
  keeping them would make every request look like rewritten history) and a message made
  of text parts only reads as its text. `type` other than `ChatMLSuccess` is a failed
  call. Usage is Chat Completions' (`prompt_tokens` includes `cached_tokens`, which are
  subtracted as cache reads); `timeToFirstToken` is kept in `extra`.
- `response.message` holds only the text of the reply, never its tool calls: the tool
  calls of a response are the `toolCall` logs that follow it, up to the next request
  (the real export logs each one there), or, failing those, the assistant message that
  the next request's history holds at that place.
- `toolCall {id, tool, args, time, response[]}`: `id` carries a `__vscode-<n>` suffix
  that the same id in later requests' history lacks; it is removed, so calls and results
  pair by id. `args` is a JSON string, parsed (kept raw when it does not parse, which the
  lint rules report). Each yields a `ToolTiming`: `time` is when the tool finished (in the
  real export, a few milliseconds before the next request starts), it started when the
  response that asked for it ended; `response[]` is the result text. The result the
  model got is the next request's `role 3` message; the export has no error flag, so no
  result is an error.
- `element` logs (a prompt element's token budget) are not calls: they are kept on the
  next request (`extra.prompt_elements`). The prompt text is kept on the first request
  of each prompt (`extra.prompt`). A switch of model between requests is kept
  (`extra.model_change`).
- All requests form one loop: every request repeats the chat so far.
- An export with no request log holds no call: `no_call_notice` says so.

Logs are numbered from 1 across the whole export; a malformed log is reported with its
number and the rest is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, int_or_none, str_or_none
from ...model import Exchange, LineError, ToolTiming
from ..dialects import openai_chat
from ..records import Record
from ..timeparse import to_epoch_seconds
from ._index import vscode_chatreplay as scoring
from ._index.vscode_chatreplay import _prompts_of
from .base import Adapter, AdapterEvent, Detection
from .registry import register

ROLES = {0: "system", 1: "user", 2: "assistant", 3: "tool"}
TEXT, IMAGE, CACHE_BREAKPOINT = 1, 2, 3
SUFFIX = re.compile(r"__vscode-\d+$")


def plain_id(tool_id: str) -> str:
    """A toolCall log's id as later requests' history writes it (no `__vscode-<n>`)."""
    return SUFFIX.sub("", tool_id)


@register
class VscodeChatReplayAdapter(Adapter):
    name = "vscode-copilot-chatreplay"
    label = "VS Code Copilot Chat prompt-log export"
    where = (
        "In VS Code, open the Copilot Chat debug view (Chat: Show Chat Debug View), then "
        "Export Prompt Logs as JSON: a *.chatreplay.json file."
    )
    markers = ("exportedAt", "totalPrompts", "totalLogEntries", "prompts")
    normalize = staticmethod(openai_chat.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._prompts = 0
        self._calls = 0
        self._model: str | None = None

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        prompts = _prompts_of(record.value)
        if prompts is None:
            yield LineError(record.line, "not a Copilot Chat prompt-log export (no prompts[])")
            return
        logs: list[tuple[int, Any, str | None]] = []
        for index, prompt in enumerate(prompts, start=1):
            if not isinstance(prompt, dict) or not isinstance(prompt.get("logs"), list):
                yield LineError(record.line, f"prompt {index} has no logs list; skipped")
                continue
            self._prompts += 1
            text = str_or_none(prompt.get("prompt"))
            for position, log in enumerate(prompt["logs"]):
                logs.append((index, log, text if position == 0 else None))
        yield from self._read(logs)

    def no_call_notice(self) -> str | None:
        if self._calls or not self._prompts:
            return None
        return (
            f"This is a VS Code Copilot Chat prompt-log export with {self._prompts} "
            "prompt(s) but no request log: no model call was recorded. Export the prompt "
            "logs again after the chat has answered."
        )

    # -- logs ---------------------------------------------------------------------------
    def _read(self, logs: list[tuple[int, Any, str | None]]) -> Iterator[AdapterEvent]:
        requests = [
            n
            for n, (_, log, _) in enumerate(logs)
            if isinstance(log, dict) and log.get("kind") == "request"
        ]
        elements: list[dict[str, Any]] = []
        prompt_text: str | None = None
        previous_end: float | None = None
        for number, (prompt, log, text) in enumerate(logs, start=1):
            prompt_text = text if text is not None else prompt_text
            if not isinstance(log, dict) or not isinstance(log.get("kind"), str):
                yield LineError(number, f"log {number} (prompt {prompt}) has no kind; skipped")
                continue
            kind = log["kind"]
            if kind == "element":
                elements.append({k: log[k] for k in ("name", "tokens", "maxTokens") if k in log})
            elif kind == "toolCall":
                yield self._tool_call(number, log, previous_end)
            elif kind == "request":
                later = [logs[n][1] for n in requests if n > number - 1]
                exchange = self._request(number, log, logs[number:], later, elements, prompt_text)
                if isinstance(exchange, LineError):
                    yield exchange
                    continue
                elements, prompt_text = [], None
                previous_end = exchange.ended_at
                yield exchange
            # other kinds (none in the real export) are not calls

    def _request(
        self,
        number: int,
        log: dict[str, Any],
        following: list[tuple[int, Any, str | None]],
        later_requests: list[Any],
        elements: list[dict[str, Any]],
        prompt_text: str | None,
    ) -> Exchange | LineError:
        raw_messages = dict_or_empty(log.get("requestMessages")).get("messages")
        if not isinstance(raw_messages, list):
            return LineError(number, f"log {number}: request without requestMessages.messages")
        messages = [chat_message(m) for m in raw_messages]
        metadata = dict_or_empty(log.get("metadata"))
        response = dict_or_empty(log.get("response"))
        reply: dict[str, Any] = {"role": "assistant", "content": _response_text(response)}
        calls = _following_calls(following)
        if not calls and later_requests:
            calls = _calls_in_history(later_requests[0], len(messages))
        if calls:
            reply["tool_calls"] = calls
        message = openai_chat.normalize_message(reply)
        extra: dict[str, Any] = {"log_id": log.get("id"), "request_name": log.get("name")}
        if prompt_text is not None:
            extra["prompt"] = prompt_text
        if elements:
            extra["prompt_elements"] = elements
        first_token = int_or_none(metadata.get("timeToFirstToken"))
        if first_token is not None:
            extra["time_to_first_token_ms"] = first_token
        request_id = str_or_none(metadata.get("requestId"))
        if request_id:
            extra["request_id"] = request_id
        model = str_or_none(metadata.get("model"))
        if self._model and model and model != self._model:
            extra["model_change"] = {"from": self._model, "to": model}
        self._model = model or self._model
        failed = log.get("type") not in (None, "ChatMLSuccess")
        self._calls += 1
        tools = metadata.get("tools")
        return Exchange(
            line=number,
            messages=messages,
            normalize=self.normalize,
            system=openai_chat.system_of(messages),
            tools=tools if isinstance(tools, list) else (),
            model=model,
            response=message,
            response_raw=log.get("response"),
            stop_reason="tool_use" if message.tool_uses else "end_turn",
            usage=openai_chat.usage_from(metadata.get("usage")),
            started_at=to_epoch_seconds(metadata.get("startTime")),
            ended_at=to_epoch_seconds(metadata.get("endTime")),
            status="error" if failed else "ok",
            error=_failure(log, response) if failed else None,
            extra=extra,
            loop_key=f"{self.name}:{self.source_name}",
            loop_label="Copilot Chat",
        )

    def _tool_call(
        self, number: int, log: dict[str, Any], previous_end: float | None
    ) -> ToolTiming | LineError:
        tool_id = str_or_none(log.get("id"))
        if tool_id is None:
            return LineError(number, f"log {number}: toolCall without an id; skipped")
        return ToolTiming(
            number,
            plain_id(tool_id),
            name=str_or_none(log.get("tool")),
            started_at=previous_end,
            ended_at=to_epoch_seconds(log.get("time")),
            result_text=_joined(log.get("response")),
            input=openai_chat.parse_arguments(log.get("args")),
        )


# -- messages ---------------------------------------------------------------------------
def chat_message(raw: Any) -> Any:
    """One `requestMessages` message as a Chat message (numeric roles and part types)."""
    if not isinstance(raw, dict):
        return raw
    role = raw.get("role")
    message: dict[str, Any] = {
        "role": ROLES.get(role, str(role)) if isinstance(role, int) else role
    }
    message["content"] = _content(raw.get("content"))
    calls = raw.get("toolCalls")
    if isinstance(calls, list):
        message["tool_calls"] = calls
    if "toolCallId" in raw:
        message["tool_call_id"] = raw["toolCallId"]
    if "name" in raw:
        message["name"] = raw["name"]
    return message


def _content(parts: Any) -> Any:
    if not isinstance(parts, list):
        return parts
    kept: list[Any] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == CACHE_BREAKPOINT:
            continue
        if kind == TEXT and isinstance(part.get("text"), str):
            kept.append({"type": "text", "text": part["text"]})
        elif kind == IMAGE:
            kept.append({"type": "image_url", "image_url": part.get("imageUrl")})
        else:
            kept.append(part)
    if len(kept) == 1 and isinstance(kept[0], dict) and kept[0].get("type") == "text":
        return kept[0]["text"]
    return kept


def _response_text(response: dict[str, Any]) -> str | None:
    text = _joined(response.get("message"))
    return text or None


def _joined(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return ""


def _following_calls(following: list[tuple[int, Any, str | None]]) -> list[dict[str, Any]]:
    """The toolCall logs after a request, up to the next request, as Chat tool calls."""
    calls = []
    for _, log, _ in following:
        if not isinstance(log, dict):
            continue
        if log.get("kind") == "request":
            break
        tool_id = str_or_none(log.get("id"))
        if log.get("kind") == "toolCall" and tool_id:
            arguments = log.get("args")
            calls.append(
                {
                    "id": plain_id(tool_id),
                    "type": "function",
                    "function": {"name": str_or_none(log.get("tool")), "arguments": arguments},
                }
            )
    return calls


def _calls_in_history(request: Any, position: int) -> list[Any]:
    """The tool calls of the assistant message a later request holds at `position`."""
    messages = dict_or_empty(dict_or_empty(request).get("requestMessages")).get("messages")
    if not isinstance(messages, list) or position >= len(messages):
        return []
    message = messages[position]
    if not isinstance(message, dict) or message.get("role") != 2:
        return []
    calls = message.get("toolCalls")
    return calls if isinstance(calls, list) else []


def _failure(log: dict[str, Any], response: dict[str, Any]) -> str:
    reason = str_or_none(response.get("reason")) or _joined(response.get("message"))
    kind = str_or_none(log.get("type")) or "failed"
    return f"{kind}: {reason}" if reason else kind
