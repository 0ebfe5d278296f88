"""Claude Agent SDK message streams: `claude -p --output-format stream-json` and the SDKs'.

The Claude Agent SDKs (Python `claude-agent-sdk`, TypeScript `@anthropic-ai/claude-agent-sdk`)
drive the Claude Code CLI over stdin/stdout with one JSON message per line; the same stream
is what `claude -p --output-format stream-json --verbose` prints. Accepted as JSONL, as a
JSON/YAML list of those messages, as `{messages: [...]}`, and as a transport log
`{metadata, messages: [{direction: send|recv, message}]}`. Every choice below was checked
against the recordings of SOURCES.md section 11.

- `system` `init` opens a session (model, tool names, CLI version: kept on the first call);
  an `init` with another session id starts new loops (several runs logged to one file).
- One API response is written as several `assistant` messages, one per content block, with
  the same `message.id`; they are ONE call. Partial lines carry partial usage (output
  tokens 0 on every line of the recordings), so the call takes the usage of the line with
  the most output tokens, never a sum. `stop_reason` is null on every line; it is inferred
  (tool_use when the response asks for a tool) and `extra.stop_reason_inferred` says so.
- `user` messages are the prompt and the tool results; those since the previous response
  are merged into the one user message the API received.
- `parent_tool_use_id` names the Task/Agent tool call a subagent runs under: each value is
  its own loop, attached to that call (`system` `task_started` gives the task id). The
  subagent's last response is complete when that call's tool_result arrives.
- `control_request` / `control_response` are the SDK and CLI talking: hook callbacks
  (`hook_callback`, with `input.hook_event_name` PreToolUse/PostToolUse/...), permission
  prompts (`can_use_tool`) and `initialize`. They are not tool calls: hook callbacks and
  permission prompts become `extra.hook_events` of the call whose tool they concern, with
  the answer when a `control_response` was recorded (a response without its request, such
  as the initialize answer that opens the openinference recordings, is accepted).
- The final `result` message is kept on the last call as `extra.session_result`: cost,
  turns, durations, and both usages. `modelUsage` counts every model the session used,
  subagents included; `usage` counts only the main conversation (SOURCES.md section 11:
  cache reads 59,771 vs 34,198), so both are kept and neither replaces the calls' own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ...coerce import str_or_none, text_of
from ...model import LineError, ToolTiming
from ..dialects import anthropic
from ..dialects import claude_code as cc
from ..records import Record
from ..transcript import NormalizedOnce, TranscriptView
from ._index import claude_agent_sdk as scoring
from ._index.claude_agent_sdk import _unwrap
from .base import Adapter, AdapterEvent, Detection
from .claude_response import ClaudeResponse, shared_value
from .registry import register

QUIET_TYPES = (
    "stream_event",  # --include-partial-messages: the same content, streamed
    "control_cancel_request",
    "keep_alive",
    "rate_limit_event",
    "tool_progress",  # TypeScript SDK progress ticks
    "auth_status",
)
HOOK_SUBTYPES = ("hook_callback", "can_use_tool")
NUMERIC_RESULT_FIELDS = frozenset({"num_turns", "total_cost_usd", "duration_ms", "duration_api_ms"})
RESULT_FIELDS = (
    "subtype",
    "is_error",
    "num_turns",
    "total_cost_usd",
    "duration_ms",
    "duration_api_ms",
    "stop_reason",
    "permission_denials",
)


@dataclass(slots=True, eq=False)
class _Thread:
    """The main conversation, or one subagent (keyed by its parent tool call)."""

    key: str
    parent_tool_id: str | None
    messages: list[Any] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)
    response: ClaudeResponse | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    hooks: list[dict[str, Any]] = field(default_factory=list)
    finished_subagents: list[_Thread] = field(default_factory=list)


@register
class ClaudeAgentSdkAdapter(Adapter):
    name = "claude-agent-sdk"
    label = "Claude Agent SDK message stream"
    where = (
        "Printed by `claude -p --output-format stream-json --verbose` (redirect it to a "
        ".jsonl file), or logged by your code from the Claude Agent SDK's message stream "
        "(Python `query()`/`ClaudeSDKClient`, TypeScript `query()`): one message per line, "
        "or a JSON/YAML list of them, or a transport log of sent/received messages."
    )
    markers = ("type", "session_id", "parent_tool_use_id", "message", "subtype", "request_id")
    normalize = staticmethod(anthropic.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._read_once = NormalizedOnce(anthropic.normalize_message)
        self.normalize = self._read_once
        self._threads: dict[str, _Thread] = {}
        self._session: dict[str, Any] = {}
        self._hooks_by_request: dict[str, dict[str, Any]] = {}
        self._tasks: dict[str, dict[str, Any]] = {}
        self._tools: dict[str, str | None] = {}
        self._generation = 0
        """Counts sessions in the file: a new session id in `init` starts new loops."""

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    # -- reading records ----------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        messages = _unwrap(record.value, lenient=True)
        if messages is None:
            value = record.value
            kind = value.get("type") if isinstance(value, dict) else None
            if kind in QUIET_TYPES:
                return
            yield LineError(record.line, "not a Claude Agent SDK stream message")
            return
        single = len(messages) == 1 and messages[0] is record.value
        for position, message in enumerate(messages, start=1):
            line = record.line if single else position
            if not isinstance(message, dict):
                yield LineError(line, "a stream message must be a JSON object")
                continue
            yield from self._message(line, message)

    def close(self) -> Iterator[AdapterEvent]:
        open_threads = sorted(
            (t for t in self._threads.values() if t.response is not None),
            key=lambda t: t.response.line if t.response else 0,
        )
        for thread in open_threads:
            yield from self._emit(thread)

    def _message(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        kind = value.get("type")
        if kind in ("assistant", "user"):
            message = value.get("message")
            if not isinstance(message, dict):
                yield LineError(line, f"a '{kind}' message without a 'message' object")
                return
            content = message.get("content")
            if content is not None and not isinstance(content, (str, list)):
                yield LineError(line, "message.content is neither text nor a list of blocks")
                return
            thread = self._thread(value)
            if kind == "user":
                yield from self._user(line, thread, message)
            else:
                yield from self._assistant(line, thread, value, message)
        elif kind == "system":
            yield from self._system(line, value)
        elif kind == "result":
            yield from self._result(line, value)
        elif kind == "control_request" and isinstance(value.get("request"), dict):
            self._control_request(line, value)
        elif kind == "control_response" and isinstance(value.get("response"), dict):
            self._control_response(value)
        elif kind in ("control_request", "control_response"):
            yield LineError(line, f"a '{kind}' without its request/response object")
        elif kind not in QUIET_TYPES:
            yield LineError(line, f"unknown stream message type {kind!r}; skipped")

    # -- conversations ------------------------------------------------------------------
    def _thread(self, value: dict[str, Any]) -> _Thread:
        parent = str_or_none(value.get("parent_tool_use_id"))
        key = f"{self._generation}:" + (f"subagent:{parent}" if parent else "main")
        thread = self._threads.get(key)
        if thread is None:
            thread = _Thread(key=key, parent_tool_id=parent)
            if parent is None and self._session:
                thread.notes["session"] = dict(self._session)
            self._threads[key] = thread
        return thread

    def _user(self, line: int, thread: _Thread, message: dict[str, Any]) -> Iterator[AdapterEvent]:
        thread.pending.append(message)
        for block in cc.tool_results(message.get("content")):
            tool_id = block.get("tool_use_id")
            subagent = self._threads.get(f"{self._generation}:subagent:{tool_id}")
            if subagent is not None:
                # The Task/Agent call answered: its subagent has given its last response,
                # shown right after the response that asked for it (which may still stream).
                owner = self._thread_of_tool(tool_id)
                if owner is None:
                    yield from self._emit(subagent)
                else:
                    owner.finished_subagents.append(subagent)
            if isinstance(tool_id, str):
                yield ToolTiming(
                    line,
                    tool_id,
                    self._tools.get(tool_id),
                    is_error=bool(block.get("is_error")),
                    result_text=text_of(block.get("content")),
                )

    def _assistant(
        self, line: int, thread: _Thread, value: dict[str, Any], message: dict[str, Any]
    ) -> Iterator[AdapterEvent]:
        message_id = str_or_none(message.get("id")) or str_or_none(value.get("uuid"))
        response = thread.response
        if response is None or message_id is None or response.message_id != message_id:
            yield from self._emit(thread)
            response = self._start(line, thread, message, message_id or f"line-{line}")
        new = cc.content_blocks(message.get("content"))
        response.add(message, new)
        for block in new:
            if _is_tool_use(block):
                self._tools[block["id"]] = str_or_none(block.get("name"))
        response.model = shared_value("model", str_or_none(message.get("model"))) or response.model
        if isinstance(value.get("error"), str):
            response.extra["error_kind"] = value["error"]

    def _start(
        self, line: int, thread: _Thread, message: dict[str, Any], message_id: str
    ) -> ClaudeResponse:
        if thread.pending:
            thread.messages.append(cc.merge_user_messages(thread.pending))
            thread.pending = []
        extra: dict[str, Any] = {"message_id": message_id, **thread.notes}
        thread.notes = {}
        if thread.parent_tool_id:
            extra["parent_tool_use_id"] = thread.parent_tool_id
        request = TranscriptView(thread.messages, len(thread.messages))
        response = ClaudeResponse.first_line(line, message_id, request, message, extra)
        thread.messages.append(response.transcript_message)
        thread.response = response
        return response

    def _emit(self, thread: _Thread) -> Iterator[AdapterEvent]:
        response = thread.response
        if response is None:
            return
        thread.response = None
        notes: dict[str, Any] = {}
        if thread.hooks:
            # Hooks fire between a response's tool_use and its result: they concern it.
            notes["hook_events"], thread.hooks = thread.hooks, []
        exchange = response.exchange(
            self.normalize,
            notes,
            loop_key=thread.key,
            loop_label=self._label(thread),
            parent_tool_id=thread.parent_tool_id,
        )
        self._read_once.keep(response.transcript_message, exchange.response)
        yield exchange
        finished, thread.finished_subagents = thread.finished_subagents, []
        for subagent in finished:
            yield from self._emit(subagent)

    @staticmethod
    def _ids_of(blocks: list[Any]) -> set[str]:
        return {b["id"] for b in blocks if _is_tool_use(b)}

    def _label(self, thread: _Thread) -> str:
        if thread.parent_tool_id is None:
            session = str_or_none(self._session.get("session_id"))
            return f"session {session[:8]}" if session else "session"
        task = self._tasks.get(thread.parent_tool_id, {})
        name = str_or_none(task.get("task_id")) or thread.parent_tool_id
        description = str_or_none(task.get("description"))
        return f"subagent {name}" + (f" ({description})" if description else "")

    # -- session messages ---------------------------------------------------------------
    def _system(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        subtype = value.get("subtype")
        if subtype == "init":
            tools = value.get("tools")
            session_id = str_or_none(value.get("session_id"))
            previous = str_or_none(self._session.get("session_id"))
            if previous and session_id and session_id != previous:
                yield from self._new_session()
            self._session = {
                "session_id": value.get("session_id"),
                "model": value.get("model"),
                "claude_code_version": value.get("claude_code_version"),
                "permission_mode": value.get("permissionMode"),
                "tools": len(tools) if isinstance(tools, list) else None,
            }
            self._thread({}).notes["session"] = dict(self._session)
        elif subtype == "task_started":
            tool_id = str_or_none(value.get("tool_use_id"))
            if tool_id:
                self._tasks[tool_id] = {
                    "task_id": value.get("task_id"),
                    "description": value.get("description"),
                }
        elif subtype in ("hook_response", "hook_started"):
            # Shell hooks configured in settings report back as system messages.
            self._thread({}).hooks.append(
                {
                    "line": line,
                    "kind": subtype.replace("_", " "),
                    "hook_event_name": value.get("hook_event") or value.get("hook_name"),
                    "exit_code": value.get("exit_code"),
                }
            )
        elif subtype == "compact_boundary":
            thread = self._thread(value)
            yield from self._emit(thread)
            thread.messages, thread.pending = [], []
            metadata = value.get("compact_metadata")
            thread.notes["compaction"] = {
                **(metadata if isinstance(metadata, dict) else {}),
                "boundary_line": line,
            }

    def _result(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        summary: dict[str, Any] = {
            k: value[k]
            for k in RESULT_FIELDS
            if k in value and (k not in NUMERIC_RESULT_FIELDS or _is_number(value[k]))
        }
        summary["line"] = line
        if isinstance(value.get("usage"), dict):
            summary["usage"] = value["usage"]
        if isinstance(value.get("modelUsage"), dict):
            summary["model_usage"] = value["modelUsage"]
            summary["model_usage_note"] = (
                "modelUsage counts every model of the session, subagents included; "
                "usage counts the main conversation only"
            )
        main = self._threads.get(f"{self._generation}:main")
        for thread in sorted(self._threads.values(), key=lambda t: t is main):
            if thread is main and thread.response is not None:
                thread.response.extra["session_result"] = summary
            yield from self._emit(thread)

    def _control_request(self, line: int, value: dict[str, Any]) -> None:
        request = value["request"]
        subtype = request.get("subtype")
        if subtype not in HOOK_SUBTYPES:
            return  # initialize, interrupt, set_permission_mode...: the SDK's own settings
        hook_input = request.get("input") if isinstance(request.get("input"), dict) else {}
        tool_id = str_or_none(request.get("tool_use_id")) or str_or_none(
            hook_input.get("tool_use_id")
        )
        event: dict[str, Any] = {
            "line": line,
            "kind": "permission" if subtype == "can_use_tool" else "hook",
            "hook_event_name": hook_input.get("hook_event_name")
            or ("PermissionRequest" if subtype == "can_use_tool" else None),
            "tool_use_id": tool_id,
            "tool_name": request.get("tool_name") or hook_input.get("tool_name"),
            "callback_id": request.get("callback_id"),
            "request_id": value.get("request_id"),
        }
        self._hooks_by_request[str(value.get("request_id"))] = event
        thread = self._thread_of_tool(tool_id) or self._thread({})
        thread.hooks.append(event)

    def _new_session(self) -> Iterator[AdapterEvent]:
        """Another session starts in the same file: close this one's loops. A prompt sent
        before the new session's `init` (transport logs) belongs to the new session."""
        old_main = self._thread({})
        for thread in list(self._threads.values()):
            yield from self._emit(thread)
        carried, old_main.pending = old_main.pending, []
        self._generation += 1
        self._threads = {}
        self._thread({}).pending.extend(carried)

    def _thread_of_tool(self, tool_id: str | None) -> _Thread | None:
        """The thread whose open response asked for `tool_id`, if any."""
        for thread in self._threads.values():
            if thread.response is not None and tool_id in self._ids_of(thread.response.blocks):
                return thread
        return None

    def _control_response(self, value: dict[str, Any]) -> None:
        response = value["response"]
        event = self._hooks_by_request.get(str(response.get("request_id")))
        if event is None:
            return  # e.g. the initialize answer, recorded without its request
        answer = response.get("response")
        event["answer"] = response.get("subtype")
        if isinstance(answer, dict):
            decision = answer.get("behavior") or answer.get("decision")
            if decision is not None:
                event["decision"] = decision


def _is_tool_use(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "tool_use"
        and isinstance(block.get("id"), str)
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
