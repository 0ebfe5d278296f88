"""GitHub Copilot CLI sessions: `~/.copilot/session-state/<session id>/events.jsonl`.

Copilot CLI logs one event per line, `{type, data, id, timestamp, parentId}`. Every choice
below was checked against the two real sessions of SOURCES.md section 27 (Copilot CLI
1.0.59 and 1.0.60, claude-sonnet-4.6).

- A model call is one `assistant.message` (distinct `data.messageId`; a repeated id is
  read once): its `content`, `reasoningText` (kept as the response's thinking) and
  `toolRequests[{toolCallId, name, arguments}]` (arguments are already a JSON object) make
  the response; `requestId`, `apiCallId` and `serviceRequestId` are kept in `extra`.
  The CLI does not log the request, so it is rebuilt, as Chat-shaped messages, from what
  the session showed the model: `system.message`, `user.message` (its
  `transformedContent`, the text that was sent, with the date and reminders the CLI wraps
  around what the user typed, which is kept as `extra.user_typed`), the earlier
  responses and one `role:"tool"` message per `tool.execution_complete`.
- Usage: a message records `outputTokens` only; input and cache tokens exist only as the
  session's totals in `session.shutdown.modelMetrics`. So calls carry no usage (their
  tokens are estimates, marked "≈"), `extra.output_tokens` keeps the recorded output and
  the last call keeps the shutdown totals (`extra.session_totals`: per-model requests,
  usage and premium-request cost, as written) so a reader can compare.
- Results: `tool.execution_complete {toolCallId, success, result{content}}`; `success:
  false` is an error result. Each also yields a `ToolTiming`: the tool started at its
  `tool.execution_start` (else when it was asked) and ended at its completion; the
  result text is kept, so the last tool before an abort still counts as answered.
- `permission.requested` / `permission.completed` are not calls: each prompt is kept on
  the call that asked for the tool (`extra.permissions`: tool id, kind, outcome and the
  seconds the user took), which explains long tool times; a denied one is marked.
- `abort` (the user pressed Esc) is noted on the call it cut short (`extra.aborted`); its
  unanswered tool calls stay dangling, as they are (the real session has one, a denied
  `bash`). `session.error` events (MCP configuration, model-list and login failures) are
  not model errors: they are kept as notes (`extra.session_errors`) on the call held when
  they came (the one before them), or, before any call, on the first.
  `session.model_change` is kept on the next call (`extra.model_change`). `hook.*`,
  `session.info`, `assistant.turn_start/turn_end` are context only: a call starts at its
  turn's `turn_start` (else the previous event) and ends at its message.
- `session.start` gives the session id, `copilotVersion` and `context.cwd` (the project),
  recorded on the first call as `extra.agent_session`.
- A session with no `assistant.message` (the user quit before a reply) holds no call:
  `no_call_notice` says so.

A call is held until the next `assistant.message` (or the end of the file), so what
follows it (results, permission prompts, an abort) can be noted on it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from traces.core.records import dataclass, field

from ...coerce import dict_or_empty, int_or_none, str_or_none
from ...model import Block, Exchange, LineError, Message, ToolTiming
from ..dialects import openai_chat
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import TranscriptView
from ._index import copilot_cli as scoring
from ._index.copilot_cli import _is_event
from .base import Adapter, AdapterEvent, Detection
from .registry import register

AGENT = "GitHub Copilot CLI"


def normalize(raw: Any) -> Message:
    """A Chat-shaped message; a tool message the CLI marked failed is an error result."""
    message = openai_chat.normalize_message(raw)
    if isinstance(raw, dict) and raw.get("is_error") is True and message.blocks:
        first = message.blocks[0]
        if first.kind == "tool_result":
            error = Block(
                "tool_result",
                text=first.text,
                tool_id=first.tool_id,
                name=first.name,
                is_error=True,
                raw=first.raw,
            )
            return Message(message.role, (error, *message.blocks[1:]))
    return message


@dataclass(slots=True)
class _Pending:
    """A call read but not yet emitted: what follows it may still be noted on it."""

    line: int
    request: TranscriptView
    message: dict[str, Any]
    data: dict[str, Any]
    started_at: float | None
    ended_at: float | None
    extra: dict[str, Any] = field(default_factory=dict)
    tool_ids: set[str] = field(default_factory=set)


@register
class CopilotCliAdapter(Adapter):
    name = "copilot-cli"
    label = "GitHub Copilot CLI session"
    where = (
        "GitHub Copilot CLI keeps each session in ~/.copilot/session-state/<session id>/"
        "events.jsonl: upload that file."
    )
    markers = ("type", "data", "id", "parentId")
    normalize = staticmethod(normalize)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._messages: list[Any] = []
        self._seen: set[str] = set()
        self._pending: _Pending | None = None
        self._session: dict[str, str] = {"agent": AGENT}
        self._version: str | None = None
        self._system: Any = None
        self._notes: dict[str, Any] = {}
        self._turn_started: float | None = None
        self._last_time: float | None = None
        self._tool_started: dict[str, float | None] = {}
        self._permissions: dict[str, dict[str, Any]] = {}
        self._events = 0
        self._calls = 0
        parts = (source_name or "").replace("\\", "/").split("/")
        self._default_key = parts[-2] if len(parts) > 1 else (parts[-1] or "session")

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    # -- reading ------------------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        event = record.value
        if not _is_event(event):
            yield LineError(
                record.line, "not a Copilot CLI event (needs type, data object, id, parentId)"
            )
            return
        self._events += 1
        line, kind, data = record.line, event["type"], event["data"]
        moment = to_epoch_seconds(event.get("timestamp"))
        if kind == "assistant.message":
            yield from self._assistant(line, data, moment)
        elif kind == "tool.execution_complete":
            yield from self._result(line, data, moment)
        elif kind == "user.message":
            text = data.get("transformedContent") or data.get("content")
            if not isinstance(text, str):
                yield LineError(line, "user.message without text content; skipped")
            else:
                self._messages.append({"role": "user", "content": text})
                typed = data.get("content")
                if isinstance(typed, str) and typed != text:
                    self._notes.setdefault("user_typed", []).append(typed)
        else:
            self._context(line, kind, data, moment)
        if moment is not None:
            self._last_time = moment

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._emit()

    def held(self) -> list[tuple[Exchange, bool]]:
        """The latest call: a later event (an abort, the shutdown totals) may add to it."""
        return [(self._exchange(self._pending), False)] if self._pending else []

    def no_call_notice(self) -> str | None:
        if self._calls or not self._events:
            return None
        session = self._session.get("session_id", "this session")
        return (
            f"This is a GitHub Copilot CLI session ({session}) in which the model never "
            "replied (no assistant.message): there is no model call to show. Upload the "
            "events.jsonl of a session that got an answer."
        )

    # -- events -------------------------------------------------------------------------
    def _context(self, line: int, kind: str, data: dict[str, Any], moment: float | None) -> None:
        if kind in ("session.start", "session.resume"):
            session_id = str_or_none(data.get("sessionId"))
            cwd = str_or_none(dict_or_empty(data.get("context")).get("cwd"))
            if session_id:
                self._session["session_id"] = session_id
            if cwd:
                self._session["project"] = cwd
            self._version = str_or_none(data.get("copilotVersion")) or self._version
        elif kind == "system.message":
            content = data.get("content")
            if isinstance(content, str):
                self._messages.append({"role": "system", "content": content})
                if self._system is None:
                    self._system = content
        elif kind == "assistant.turn_start":
            self._turn_started = moment
        elif kind == "session.model_change":
            kept = ("newModel", "previousModel", "reasoningEffort")
            self._notes["model_change"] = {k: v for k, v in data.items() if k in kept}
        elif kind == "session.error":
            note = {"type": data.get("errorType"), "message": data.get("message"), "line": line}
            target = self._pending.extra if self._pending else self._notes
            target.setdefault("session_errors", []).append(note)
        elif kind == "tool.execution_start":
            tool_id = str_or_none(data.get("toolCallId"))
            if tool_id:
                self._tool_started[tool_id] = moment
        elif kind in ("permission.requested", "permission.completed"):
            self._permission(kind, data, moment)
        elif kind == "abort" and self._pending is not None:
            self._pending.extra["aborted"] = str_or_none(data.get("reason")) or "aborted"
        elif kind == "session.shutdown" and self._pending is not None:
            totals = {
                k: data[k]
                for k in ("modelMetrics", "totalPremiumRequests", "totalApiDurationMs")
                if k in data
            }
            self._pending.extra["session_totals"] = totals

    def _permission(self, kind: str, data: dict[str, Any], moment: float | None) -> None:
        request_id = str_or_none(data.get("requestId"))
        if request_id is None:
            return
        if kind == "permission.requested":
            asked = dict_or_empty(data.get("permissionRequest"))
            self._permissions[request_id] = {
                "tool_id": str_or_none(asked.get("toolCallId")),
                "kind": str_or_none(asked.get("kind")),
                "asked_at": moment,
            }
            return
        prompt = self._permissions.pop(request_id, None)
        pending = self._pending
        if prompt is None or pending is None or prompt["tool_id"] not in pending.tool_ids:
            return
        asked_at = prompt.pop("asked_at")
        prompt["result"] = str_or_none(dict_or_empty(data.get("result")).get("kind"))
        if asked_at is not None and moment is not None:
            prompt["waited_s"] = round(max(0.0, moment - asked_at), 3)
        if prompt["result"] and prompt["result"].startswith("denied"):
            prompt["denied"] = True
        pending.extra.setdefault("permissions", []).append(prompt)

    def _assistant(
        self, line: int, data: dict[str, Any], moment: float | None
    ) -> Iterator[AdapterEvent]:
        message_id = str_or_none(data.get("messageId"))
        if message_id is None:
            yield LineError(line, "assistant.message without a messageId; not a call")
            return
        if message_id in self._seen:
            return
        requests = data.get("toolRequests", [])
        if not isinstance(requests, list):
            yield LineError(line, "assistant.message toolRequests is not a list; tools dropped")
            requests = []
        yield from self._emit()
        self._seen.add(message_id)
        calls, tool_ids = [], set()
        for request in requests:
            tool_id = str_or_none(request.get("toolCallId")) if isinstance(request, dict) else None
            if tool_id is None:
                yield LineError(line, "a tool request without a toolCallId; skipped")
                continue
            tool_ids.add(tool_id)
            self._tool_started.setdefault(tool_id, moment)
            calls.append(
                {
                    "id": tool_id,
                    "type": "function",
                    "function": {
                        "name": str_or_none(request.get("name")),
                        "arguments": request.get("arguments"),
                    },
                }
            )
        content = data.get("content")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content if isinstance(content, str) and content else None,
        }
        reasoning = data.get("reasoningText")
        if isinstance(reasoning, str) and reasoning:
            message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = calls
        extra: dict[str, Any] = {"message_id": message_id}
        extra.update(
            {
                key: value
                for key in ("requestId", "apiCallId", "serviceRequestId", "turnId")
                if isinstance(value := data.get(key), str)
            }
        )
        output = int_or_none(data.get("outputTokens"))
        if output is not None:
            extra["output_tokens"] = output
        if self._calls == 0:
            extra["agent_session"] = dict(self._session)
            if self._version:
                extra["copilot_version"] = self._version
        extra.update(self._notes)
        self._notes = {}
        started = self._turn_started if self._turn_started is not None else self._last_time
        self._turn_started = None
        self._pending = _Pending(
            line,
            TranscriptView(self._messages, len(self._messages)),
            message,
            data,
            started,
            moment,
            extra,
            tool_ids,
        )
        self._messages.append(message)
        self._calls += 1

    def _result(
        self, line: int, data: dict[str, Any], moment: float | None
    ) -> Iterator[AdapterEvent]:
        tool_id = str_or_none(data.get("toolCallId"))
        if tool_id is None:
            yield LineError(line, "tool.execution_complete without a toolCallId; skipped")
            return
        success = data.get("success")
        if not isinstance(success, bool):
            yield LineError(line, "tool.execution_complete without a true/false success")
        is_error = success is False
        text = _result_text(data)
        result: dict[str, Any] = {"role": "tool", "tool_call_id": tool_id, "content": text}
        if is_error:
            result["is_error"] = True
        self._messages.append(result)
        yield ToolTiming(
            line,
            tool_id,
            started_at=self._tool_started.pop(tool_id, None),
            ended_at=moment,
            is_error=is_error,
            result_text=text,
        )

    # -- calls --------------------------------------------------------------------------
    def _emit(self) -> Iterator[AdapterEvent]:
        pending, self._pending = self._pending, None
        if pending is not None:
            yield self._exchange(pending)

    def _exchange(self, pending: _Pending) -> Exchange:
        response = normalize(pending.message)
        model = str_or_none(pending.data.get("model"))
        return Exchange(
            line=pending.line,
            messages=pending.request,
            normalize=self.normalize,
            system=self._system,
            model=model,
            response=response,
            response_raw=pending.data,
            # Not recorded: implied by whether the reply asked for tools.
            stop_reason="tool_use" if response.tool_uses else "end_turn",
            usage=None,
            started_at=pending.started_at,
            ended_at=pending.ended_at,
            extra=dict(pending.extra),
            loop_key=f"copilot-cli:{self._session.get('session_id') or self._default_key}",
            loop_label="Copilot CLI session",
            tokens_estimated=True,
        )


def _result_text(data: dict[str, Any]) -> str:
    """What the model was given: `result.content`, else an error's message, else JSON."""
    result = data.get("result")
    if isinstance(result, dict):
        content = result.get("content")
        if isinstance(content, str):
            return content
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    return orjson.dumps(result).decode()
