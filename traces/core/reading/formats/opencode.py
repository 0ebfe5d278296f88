"""OpenCode's storage tree: one JSON file per session, message and message part.

Where: `~/.local/share/opencode/storage/` with `session/<project>/<ses id>.json` (the
session: id, projectID, directory, title, parentID for a subagent's session, time),
`message/<ses id>/<msg id>.json` (role, time{created, completed}, modelID, providerID,
agent, path{cwd, root}, tokens{input, output, reasoning, cache{read, write}}, cost,
finish, error) and `part/<msg id>/<prt id>.json` (type text, reasoning, tool,
step-start, step-finish, file, patch, …). No real tree could be shared (SOURCES.md:
OpenCode's repository is over the snapshot limit and the fixtures found are hand-made),
so the shapes are taken from OpenCode's `session/message-v2.ts` and the test tree is
written following it.

Upload the files of a session together (`analyze_files` with their paths): every file is
one JSON document, and one reader (`reads_folder`) keeps them all and rebuilds the calls
when the last is read, in the store's order: sessions by creation time, messages by
`time.created` then id, parts by id (OpenCode's ids sort by creation), whatever the
order of the files.

Calls: an assistant message runs one model call per step (`step-start` … `step-finish`
parts); each step is a call, with the step-finish's tokens and cost (OpenCode's
`tokens.input` is already the uncached input; `output` excludes reasoning, which is
billed as output, so output = output + reasoning, reasoning kept in `extra`). A message
with no step-finish is one call with the message's own tokens. A step's request is the
session's transcript so far (Anthropic-shaped messages, a `TranscriptView`): user text
and files, then for each step the assistant's reasoning (thinking), text and tool calls
(`tool_use` with the part's `callID`, `tool` and `state.input`), followed by a user
message with the results of the tools that ended (`completed`: `state.output`;
`error`: `state.error`, flagged as an error). Pending or running tools have no result
(dangling). Tool start and end times come from `state.time` (`ToolTiming`). A message's
`error` (aborted, API error) makes its last call an error, with the error's message.
Times are epoch ms: a message's first call starts at `time.created`, a later step when
the previous step's tools ended, and the last ends at `time.completed` (earlier steps
record no end of their own).

Each session is a loop (`loop_key` = its id, labelled with its title); a subagent's
session (`parentID`) hangs under the `task` tool call whose `state.metadata.sessionId`
names it. The first call carries `extra["agent_session"] = {"agent": "OpenCode",
"session_id", "project"}` (the session's `directory`, else the message's `path.cwd`).
Files that are not an OpenCode record, or records missing their ids, are reported with
their reason; a tree with no assistant message makes no call and says what was read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ...coerce import dict_or_empty
from ...model import Exchange, LineError, ToolTiming, Usage
from ..dialects import anthropic
from ..records import Record
from ..transcript import TranscriptView
from ._index import opencode as scoring
from ._index.opencode import _kind
from .base import Adapter, AdapterEvent, Detection
from .registry import register

AGENT = "OpenCode"


def _ms(value: Any) -> float | None:
    """OpenCode writes epoch milliseconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value / 1000


@dataclass
class _Store:
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)
    parts: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


@register
class OpenCodeAdapter(Adapter):
    name = "opencode"
    label = "OpenCode storage (session, message and part files)"
    where = (
        "~/.local/share/opencode/storage/: upload a session's files together: "
        "session/<project>/<ses id>.json, message/<ses id>/*.json and part/<msg id>/*.json "
        "for each of its messages."
    )
    markers = ("id", "sessionID", "messageID", "role", "type", "time", "tokens")
    reads_folder = True
    normalize = staticmethod(anthropic.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self.store: _Store = self.shared.setdefault(self.name, _Store())
        self.calls = 0
        self._spawned: dict[str, str] = {}

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        kind = _kind(value)
        where = f"{self.source_name}: " if self.source_name else ""
        if kind is None:
            yield LineError(
                record.line,
                f"{where}not an OpenCode session, message or part (no ses_/msg_/prt_ id)",
            )
            return
        if kind == "session":
            self.store.sessions[value["id"]] = value
        elif kind == "message":
            if not isinstance(value.get("sessionID"), str):
                yield LineError(record.line, f"{where}message has no 'sessionID' text")
                return
            self.store.messages[value["id"]] = value
        else:
            message_id = value.get("messageID")
            if not isinstance(message_id, str) or not isinstance(value.get("type"), str):
                yield LineError(record.line, f"{where}part has no 'messageID' or 'type' text")
                return
            self.store.parts.setdefault(message_id, {})[value["id"]] = value
        return

    # -- rebuilding ---------------------------------------------------------------------
    def close(self) -> Iterator[AdapterEvent]:
        store = self.store
        by_session: dict[str, list[dict[str, Any]]] = {}
        for message in store.messages.values():
            by_session.setdefault(message["sessionID"], []).append(message)
        self._spawned = self._task_calls()

        def session_order(session_id: str) -> tuple[float, str]:
            session = store.sessions.get(session_id, {})
            created = dict_or_empty(session.get("time")).get("created")
            if not isinstance(created, (int, float)):
                created = min(_created(m) for m in by_session[session_id])
            return float(created), session_id

        for session_id in sorted(by_session, key=session_order):
            messages = sorted(by_session[session_id], key=lambda m: (_created(m), m["id"]))
            yield from self._session(session_id, messages)
        store.messages.clear()
        store.parts.clear()

    def _task_calls(self) -> dict[str, str]:
        """Subagent session id -> the tool call (a `task`) that started it."""
        spawned: dict[str, str] = {}
        for parts in self.store.parts.values():
            for part in parts.values():
                if part.get("type") != "tool":
                    continue
                state = dict_or_empty(part.get("state"))
                child = dict_or_empty(state.get("metadata")).get("sessionId")
                if isinstance(child, str) and isinstance(part.get("callID"), str):
                    spawned[child] = part["callID"]
        return spawned

    def _session(self, session_id: str, messages: list[dict[str, Any]]) -> Iterator[AdapterEvent]:
        session = self.store.sessions.get(session_id, {})
        transcript: list[dict[str, Any]] = []
        for message in messages:
            parts = [p for _, p in sorted(self.store.parts.get(message["id"], {}).items())]
            if message.get("role") == "user":
                transcript.append({"role": "user", "content": _user_blocks(parts)})
                continue
            if message.get("role") != "assistant":
                continue
            steps = _steps(parts)
            for step_index, step in enumerate(steps):
                last = step_index == len(steps) - 1
                yield from self._step(session, session_id, message, step, last, transcript)
                for part in step.tools:
                    timing = _timing(part)
                    if timing is not None:
                        yield timing

    def _step(
        self,
        session: dict[str, Any],
        session_id: str,
        message: dict[str, Any],
        step: _Step,
        last: bool,
        transcript: list[dict[str, Any]],
    ) -> Iterator[AdapterEvent]:
        request = TranscriptView(transcript, len(transcript))
        reply = {"role": "assistant", "content": step.blocks}
        tokens = dict_or_empty(step.finish.get("tokens") if step.finish else message.get("tokens"))
        cache = dict_or_empty(tokens.get("cache"))
        reasoning = _int(tokens.get("reasoning"))
        usage = (
            Usage(
                input_tokens=_int(tokens.get("input")),
                output_tokens=_int(tokens.get("output")) + reasoning,
                cache_read_tokens=_int(cache.get("read")),
                cache_write_tokens=_int(cache.get("write")),
            )
            if tokens
            else None
        )
        extra: dict[str, Any] = {"message_id": message["id"]}
        for key in ("providerID", "agent", "mode") + (("finish",) if last else ()):
            if isinstance(message.get(key), str):
                extra[key] = message[key]
        cost = (step.finish or message).get("cost")
        if isinstance(cost, (int, float)):
            extra["cost_usd"] = cost
        if reasoning:
            extra["reasoning_tokens"] = reasoning
        if step.finish and isinstance(step.finish.get("reason"), str):
            extra["step_finish_reason"] = step.finish["reason"]
        if self.calls == 0:
            project = session.get("directory") or dict_or_empty(message.get("path")).get("cwd")
            agent_session = {"agent": AGENT, "session_id": session_id}
            if isinstance(project, str):
                agent_session["project"] = project
            extra["agent_session"] = agent_session
        self.calls += 1
        error = _error_text(message.get("error")) if last else None
        times = dict_or_empty(message.get("time"))
        parent = session.get("parentID")
        yield Exchange(
            line=1,
            messages=request,
            normalize=anthropic.normalize_message,
            model=message.get("modelID") if isinstance(message.get("modelID"), str) else None,
            response=anthropic.normalize_message(reply),
            response_raw=reply,
            stop_reason=_stop_reason(step, message),
            usage=usage,
            started_at=step.started_at
            if step.started_at is not None
            else _ms(times.get("created")),
            ended_at=_ms(times.get("completed")) if last else None,
            status="error" if error else "ok",
            error=error,
            extra=extra,
            loop_key=session_id,
            loop_label=session.get("title") if isinstance(session.get("title"), str) else None,
            parent_tool_id=self._spawned.get(session_id) if isinstance(parent, str) else None,
        )
        transcript.append(reply)
        results = [_result(part) for part in step.tools]
        answered = [block for block in results if block is not None]
        if answered:
            transcript.append({"role": "user", "content": answered})

    def no_call_notice(self) -> str | None:
        if self.calls:
            return None
        store = self.store
        return (
            f"Read as OpenCode storage (opencode): {len(store.sessions)} session file(s), "
            "but no assistant message with its parts: upload the session's "
            "message/<ses id>/*.json and part/<msg id>/*.json files together with it."
        )


@dataclass
class _Step:
    blocks: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    finish: dict[str, Any] | None = None
    started_at: float | None = None


def _steps(parts: list[dict[str, Any]]) -> list[_Step]:
    """The model calls of one assistant message: its step-start … step-finish runs."""
    steps: list[_Step] = []
    current: _Step | None = None
    previous_end: float | None = None
    for part in parts:
        kind = part.get("type")
        if kind == "step-start" or current is None:
            if current is not None and (current.blocks or current.finish):
                steps.append(current)
            current = _Step(started_at=previous_end)
            if kind == "step-start":
                continue
        if kind == "step-finish":
            current.finish = part
            steps.append(current)
            ends = [e for e in (_tool_end(t) for t in current.tools) if e is not None]
            previous_end = max(ends) if ends else None
            current = None
            continue
        block = _block(part)
        if block is not None:
            current.blocks.append(block)
        if kind == "tool":
            current.tools.append(part)
    if current is not None and (current.blocks or not steps):
        steps.append(current)
    return steps


def _block(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "reasoning" and isinstance(part.get("text"), str):
        return {"type": "thinking", "thinking": part["text"]}
    if kind == "tool" and isinstance(part.get("callID"), str):
        state = dict_or_empty(part.get("state"))
        return {
            "type": "tool_use",
            "id": part["callID"],
            "name": str(part.get("tool") or "tool"),
            "input": state.get("input") if isinstance(state.get("input"), dict) else {},
        }
    return None


def _user_blocks(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "file":
            name = part.get("filename") or part.get("url") or "file"
            blocks.append({"type": "text", "text": f"[file: {name}]"})
    return blocks


def _result(part: dict[str, Any]) -> dict[str, Any] | None:
    state = dict_or_empty(part.get("state"))
    status = state.get("status")
    if status == "completed":
        output = state.get("output")
        return {
            "type": "tool_result",
            "tool_use_id": part["callID"],
            "content": output if isinstance(output, str) else str(output),
        }
    if status == "error":
        return {
            "type": "tool_result",
            "tool_use_id": part["callID"],
            "content": str(state.get("error") or "error"),
            "is_error": True,
        }
    return None


def _tool_end(part: dict[str, Any]) -> float | None:
    return _ms(dict_or_empty(dict_or_empty(part.get("state")).get("time")).get("end"))


def _timing(part: dict[str, Any]) -> ToolTiming | None:
    state = dict_or_empty(part.get("state"))
    times = dict_or_empty(state.get("time"))
    if not times or not isinstance(part.get("callID"), str):
        return None
    status = state.get("status")
    return ToolTiming(
        line=1,
        tool_id=part["callID"],
        name=str(part.get("tool") or "tool"),
        started_at=_ms(times.get("start")),
        ended_at=_ms(times.get("end")),
        is_error=True if status == "error" else (False if status == "completed" else None),
    )


def _stop_reason(step: _Step, message: dict[str, Any]) -> str | None:
    if any(block.get("type") == "tool_use" for block in step.blocks):
        return "tool_use"
    finish = (step.finish or {}).get("reason") or message.get("finish")
    if finish in ("stop", "end_turn"):
        return "end_turn"
    if finish == "length":
        return "max_tokens"
    return finish if isinstance(finish, str) else None


def _error_text(error: Any) -> str | None:
    if not isinstance(error, dict):
        return None
    data = dict_or_empty(error.get("data"))
    message = data.get("message")
    name = error.get("name") or "error"
    return f"{name}: {message}" if isinstance(message, str) and message else str(name)


def _created(message: dict[str, Any]) -> float:
    created = dict_or_empty(message.get("time")).get("created")
    return float(created) if isinstance(created, (int, float)) else 0.0


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
