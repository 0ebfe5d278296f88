"""OpenAI Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Every line is `{timestamp, type, payload}`: `session_meta` (session id, base
instructions), `turn_context` (the model of the turn), `response_item` (a Responses API
history item: message, reasoning, function_call, function_call_output, custom_tool_call,
web_search_call …), `event_msg` (token_count, user_message, exec_command_end,
patch_apply_end, task_started/complete, error …) and `compacted`. Early versions wrote the
items bare, without the wrapper; those are read too.

A rollout logs the conversation, not the HTTP requests, so the calls are rebuilt: a run
of consecutive model-output items is one response, and its request is every item
recorded before it (the same item objects, viewed as a prefix, never copied). The
`token_count` event after a response gives that call's usage (`last_token_usage`, whose
`input_tokens` include the cached ones). Files without token counts leave usage unknown.
All calls of a file share the session id as loop key.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ...coerce import dict_or_empty
from ...model import Exchange, LineError, Message, ToolTiming, Usage
from ..dialects import codex
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import TranscriptView
from ._index import codex_rollout as scoring
from ._index.codex_rollout import ROLLOUT_TYPES
from .base import Adapter, AdapterEvent, Detection
from .registry import register

TIMING_BEGIN = frozenset({"exec_command_begin", "patch_apply_begin", "mcp_tool_call_begin"})
TIMING_END = frozenset({"exec_command_end", "patch_apply_end", "mcp_tool_call_end"})
SESSION_KEYS = ("id", "timestamp", "cwd", "originator", "cli_version", "source", "model_provider")
WEB_SEARCH_NOTE = (
    "web_search_call items are searches the API ran itself: they carry no call_id and "
    "get no output item, so they are shown as 'other' blocks, not as tool calls"
)
TYPED_USER_MARK = "event_msg user_message"


@dataclass(slots=True)
class _Response:
    """A model response being assembled from consecutive output items."""

    line: int
    request: TranscriptView
    model: str | None
    turn_id: str | None
    started_at: float | None
    compaction: dict[str, Any] | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    ended_at: float | None = None
    usage: Usage | None = None
    usage_raw: dict[str, Any] | None = None
    closed: bool = False
    """An input item followed: the next output item starts a new response."""
    aborted: str | None = None


@register
class CodexRolloutAdapter(Adapter):
    name = "codex-rollout"
    label = "OpenAI Codex CLI session rollout"
    where = (
        "Written by the Codex CLI and desktop app, one file per session: "
        "`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`."
    )
    normalize = staticmethod(codex.normalize_item)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._session_id: str | None = None
        self._session_info: dict[str, Any] | None = None
        self._system: str | None = None
        self._model: str | None = None
        self._turn_id: str | None = None
        self._transcript: list[Any] = []
        self._pending: _Response | None = None
        self._typed_user: dict[str, Any] | None = None
        """A user_message event whose response_item has not (yet) been seen."""
        self._last_time: float | None = None
        self._compacted = False
        self._compaction: dict[str, Any] | None = None
        """How the history of the next response's request was compacted."""
        self._output_at: dict[str, int] = {}
        """Where each tool output sits in the transcript, by call_id."""
        self._emitted_len = 0
        """Length of the latest request emitted: outputs before it are paired."""
        self._held_timings: list[ToolTiming] = []

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    # -- reading ----------------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not isinstance(value, dict):
            yield LineError(record.line, "expected a JSON object {timestamp, type, payload}")
            return
        time = to_epoch_seconds(value.get("timestamp"))
        if "payload" in value:
            yield from self._wrapped(record.line, value, time)
        else:
            yield from self._legacy(record.line, value, time)
        if time is not None:
            self._last_time = time

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._flush()
        yield from self._release(everything=True)

    def _wrapped(
        self, line: int, value: dict[str, Any], time: float | None
    ) -> Iterator[AdapterEvent]:
        kind = value.get("type")
        payload = value["payload"]
        if not isinstance(kind, str):
            yield LineError(line, "not a Codex rollout line: 'type' is missing")
            return
        if kind == "compacted":
            yield from self._compact(line, payload if isinstance(payload, dict) else {})
            return
        if kind not in ROLLOUT_TYPES:
            return  # a record kind from a newer Codex: nothing in it is a call
        if not isinstance(payload, dict):
            yield LineError(line, f"the '{kind}' line's payload is not a JSON object")
            return
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "turn_context":
            self._turn(payload)
        elif kind == "response_item":
            yield from self._item(line, payload, time)
        else:
            yield from self._event(line, payload, time)

    def _legacy(
        self, line: int, value: dict[str, Any], time: float | None
    ) -> Iterator[AdapterEvent]:
        """Rollouts from before the {type, payload} wrapper: bare items and a meta line."""
        kind = value.get("type")
        if "record_type" in value:
            return  # a state snapshot
        if kind == "message" or kind in codex.MODEL_OUTPUT_ITEMS or kind in codex.TOOL_OUTPUT_ITEMS:
            yield from self._item(line, value, time)
        elif kind is None and "id" in value and "timestamp" in value:
            self._meta(value)
        else:
            yield LineError(line, "not a Codex rollout line: no 'type' and 'payload'")

    # -- session and turn -------------------------------------------------------------
    def _meta(self, payload: dict[str, Any]) -> None:
        if self._session_id is not None:
            return  # a forked session repeats its parent's meta; the first one names it
        session_id = payload.get("id")
        self._session_id = str(session_id) if session_id else None
        self._session_info = {k: payload[k] for k in SESSION_KEYS if k in payload}
        instructions = payload.get("base_instructions") or payload.get("instructions")
        if isinstance(instructions, dict):
            instructions = instructions.get("text")
        self._system = instructions if isinstance(instructions, str) else None

    def _turn(self, payload: dict[str, Any]) -> None:
        if isinstance(payload.get("model"), str):
            self._model = payload["model"]
        if isinstance(payload.get("turn_id"), str):
            self._turn_id = payload["turn_id"]

    # -- items ------------------------------------------------------------------------
    def _item(self, line: int, item: dict[str, Any], time: float | None) -> Iterator[AdapterEvent]:
        if item.get("type") in codex.IGNORED_ITEMS:
            return
        if codex.is_model_output(item):
            self._commit_typed_user()
            pending = self._pending
            if pending is None or pending.closed:
                yield from self._flush()
                pending = self._pending = _Response(
                    line=line,
                    request=TranscriptView(self._transcript, len(self._transcript)),
                    model=self._model,
                    turn_id=self._turn_id,
                    started_at=self._last_time,
                    compaction=self._compaction if self._compacted else None,
                )
                self._compacted = False
            pending.items.append(item)
            pending.ended_at = time if time is not None else pending.ended_at
            self._transcript.append(item)
            return
        if self._typed_user is not None:
            if _user_text(item) == _user_text(self._typed_user):
                self._typed_user = None  # the event and the item are the same message
            else:
                self._commit_typed_user()
        self._add_input(item)

    def _add_input(self, item: Any) -> None:
        if self._pending is not None:
            self._pending.closed = True
        if isinstance(item, dict) and item.get("type") in codex.TOOL_OUTPUT_ITEMS:
            call_id = item.get("call_id")
            if isinstance(call_id, str):
                self._output_at[call_id] = len(self._transcript)
        self._transcript.append(item)

    def _commit_typed_user(self) -> None:
        if self._typed_user is not None:
            self._add_input(self._typed_user)
            self._typed_user = None

    def _compact(
        self, line: int, payload: dict[str, Any], source: str = "compacted line"
    ) -> Iterator[AdapterEvent]:
        """History was compacted: the next request starts from the replacement.

        Without a recorded `replacement_history` the new history is approximated the way
        Codex builds it: the earlier user messages, then the summary. Tool outputs
        recorded since the last request are answers all the same, though no request will
        carry them: they are handed over as timings with their text, so they pair.
        """
        yield from self._flush()
        yield from self._uncarried_outputs(line)
        yield from self._release(everything=True)
        self._output_at.clear()
        self._emitted_len = 0
        history = payload.get("replacement_history")
        if isinstance(history, list):
            self._transcript = list(history)
            typed = _user_text(self._typed_user)
            if any(_user_text(item) == typed for item in history):
                self._typed_user = None  # the replacement already holds that message
        else:
            # Codex keeps the user's messages and adds the summary as a user message.
            kept = [item for item in self._transcript if _user_text(item) is not None]
            summary = payload.get("message")
            self._transcript = kept + ([_user_item(summary, "compacted")] if summary else [])
        self._compacted = True
        self._compaction = {"source": f"Codex {source}", "line": line}

    def _uncarried_outputs(self, line: int) -> Iterator[AdapterEvent]:
        for item in self._transcript[self._emitted_len :]:
            if isinstance(item, dict) and item.get("type") in codex.TOOL_OUTPUT_ITEMS:
                block = codex.normalize_item(item).blocks[0]
                if block.tool_id:
                    flagged = True if block.is_error else None
                    yield ToolTiming(line, block.tool_id, result_text=block.text, is_error=flagged)

    # -- events -----------------------------------------------------------------------
    def _event(
        self, line: int, payload: dict[str, Any], time: float | None
    ) -> Iterator[AdapterEvent]:
        kind = payload.get("type")
        if kind == "token_count":
            yield from self._token_count(payload, time)
        elif kind == "user_message":
            self._user_message(payload)
        elif kind == "turn_aborted" and self._pending is not None:
            self._pending.aborted = str(payload.get("reason") or "aborted")
        elif kind == "error":
            yield from self._failed_call(line, payload, time)
        elif kind == "context_compacted" and not self._compacted:
            # Newer Codex announces a compaction with this event; when no `compacted`
            # line came with it, the history is approximated from the user messages.
            yield from self._compact(line, {}, source="context_compacted event")
        elif kind in TIMING_BEGIN or kind in TIMING_END:
            timing = _timing(line, kind, payload, time)
            if timing is not None:
                self._held_timings.append(timing)
                yield from self._release()

    def _token_count(self, payload: dict[str, Any], time: float | None) -> Iterator[AdapterEvent]:
        info = payload.get("info")
        if not isinstance(info, dict):
            return  # rate limits only
        pending = self._pending
        if pending is None or pending.usage is not None:
            return  # a repeated count for a response already accounted
        last = info.get("last_token_usage")
        pending.usage = codex.usage_from(last)
        pending.usage_raw = last if isinstance(last, dict) else None
        if time is not None:
            pending.ended_at = time
        yield from self._flush()

    def _user_message(self, payload: dict[str, Any]) -> None:
        """Some rollouts keep the user's words only in this event: add them once."""
        text = payload.get("message")
        if not isinstance(text, str):
            return
        self._commit_typed_user()
        last = self._transcript[-1] if self._transcript else None
        if _user_text(last) == text.strip():
            return
        self._typed_user = _user_item(text, TYPED_USER_MARK)

    def _failed_call(
        self, line: int, payload: dict[str, Any], time: float | None
    ) -> Iterator[AdapterEvent]:
        """An `error` event: the model request failed, no response items follow."""
        yield from self._flush()
        self._commit_typed_user()
        yield Exchange(
            line=line,
            messages=TranscriptView(self._transcript, len(self._transcript)),
            normalize=self.normalize,
            system=self._system,
            model=self._model,
            started_at=self._last_time,
            ended_at=time,
            status="error",
            error=str(payload.get("message") or "error"),
            extra={"event": payload},
            loop_key=self._loop_key(),
            loop_label=self._loop_label(),
        )
        self._emitted_len = len(self._transcript)
        yield from self._release()

    # -- emitting ---------------------------------------------------------------------
    def _release(self, everything: bool = False) -> Iterator[AdapterEvent]:
        """Emit tool timings once a request carrying the tool's output was emitted.

        The builder takes a run's error flag from its result when the result is paired,
        dropping one a timing set earlier; holding timings until then keeps a non-zero
        exit code of a command whose output only said "still running".
        """
        if not self._held_timings:
            return
        held, self._held_timings = self._held_timings, []
        for timing in held:
            if (
                everything
                or self._output_at.get(timing.tool_id, self._emitted_len) < self._emitted_len
            ):
                yield timing
            else:
                self._held_timings.append(timing)

    def held(self) -> list[tuple[Exchange, bool]]:
        """The response being read: Codex emits it at its `token_count` event, the next
        response or the end of the file, so the last response of a session whose last
        lines are still to come is held; complete once a later input line closed it."""
        pending = self._pending
        if pending is None:
            return []
        return [(self._exchange(pending, self._session_info), pending.closed)]

    def _flush(self) -> Iterator[AdapterEvent]:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        session, self._session_info = self._session_info, None
        yield self._exchange(pending, session)
        self._emitted_len = len(pending.request)
        yield from self._release()

    def _exchange(self, pending: _Response, session: dict[str, Any] | None) -> Exchange:
        """The exchange of a response (`session`: the session's details, told once)."""
        blocks = tuple(b for item in pending.items for b in codex.normalize_item(item).blocks)
        return Exchange(
            line=pending.line,
            messages=pending.request,
            normalize=self.normalize,
            system=self._system,
            model=pending.model,
            response=Message("assistant", blocks),
            response_raw=list(pending.items),
            stop_reason="tool_use" if any(b.kind == "tool_use" for b in blocks) else "end_turn",
            usage=pending.usage,
            started_at=pending.started_at,
            ended_at=pending.ended_at,
            extra=self._extra(pending, session),
            loop_key=self._loop_key(),
            loop_label=self._loop_label(),
            tokens_estimated=pending.usage is None,
        )

    def _extra(self, pending: _Response, session: dict[str, Any] | None) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if session is not None:
            extra["session"] = session
        if pending.turn_id:
            extra["turn_id"] = pending.turn_id
        if pending.usage_raw is not None:
            extra["last_token_usage"] = pending.usage_raw
        searches = sum(1 for item in pending.items if item.get("type") == "web_search_call")
        if searches:
            extra["web_search_calls"] = searches
            extra["web_search_note"] = WEB_SEARCH_NOTE
        if pending.aborted:
            extra["turn_aborted"] = pending.aborted
        if pending.compaction is not None:
            extra["compaction"] = pending.compaction
        return extra

    def _loop_key(self) -> str:
        return self._session_id or f"codex:{self.source_name or 'session'}"

    def _loop_label(self) -> str:
        return f"Codex session {self._session_id}" if self._session_id else "Codex session"


def _timing(line: int, kind: str, payload: dict[str, Any], time: float | None) -> ToolTiming | None:
    """When a tool really ran, from an exec/patch/MCP begin or end event."""
    call_id = payload.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        return None
    invocation = dict_or_empty(payload.get("invocation"))
    name = invocation.get("tool") if isinstance(invocation.get("tool"), str) else None
    if kind in TIMING_BEGIN:
        return ToolTiming(line, call_id, name=name, started_at=time)
    duration = codex.duration_seconds(payload.get("duration"))
    started = time - duration if time is not None and duration is not None else None
    return ToolTiming(
        line, call_id, name=name, started_at=started, ended_at=time, is_error=_failed(payload)
    )


def _failed(payload: dict[str, Any]) -> bool | None:
    """Whether an end event reports a failed run (None when it does not say)."""
    code = payload.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        return code != 0
    success = payload.get("success")
    if isinstance(success, bool):
        return not success
    result = payload.get("result")
    if isinstance(result, dict):
        if "Err" in result:
            return True
        ok = result.get("Ok")
        flagged = ok.get("isError") if isinstance(ok, dict) else None
        if isinstance(flagged, bool):
            return flagged
    return None


def _user_item(text: str, recorded_as: str) -> dict[str, Any]:
    """A user message item rebuilt from an event (marked, so the viewer can tell)."""
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
        "recorded_as": recorded_as,
    }


def _user_text(item: Any) -> str | None:
    """The text of a user message item, for matching it with a user_message event."""
    if not isinstance(item, dict) or item.get("type") != "message" or item.get("role") != "user":
        return None
    message = codex.normalize_item(item)
    return "\n".join(b.text for b in message.blocks if b.kind == "text").strip()
