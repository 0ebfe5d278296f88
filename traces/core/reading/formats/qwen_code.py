"""Qwen Code sessions: `~/.qwen/projects/<project>/chats/<session>.jsonl`.

Qwen Code (QwenLM/qwen-code) is a fork of Gemini CLI, but its session store is not Gemini
CLI's: its ChatRecordingService appends one self-contained record per line, chained like
Claude Code's by `uuid`/`parentUuid`, and keeps the model-facing message in Gemini
`Content` shape. No real session file was found (SOURCES.md: "Qwen Code chats: not found
at all"), so everything below was read from the recorder's source
(`packages/core/src/services/chatRecordingService.ts`) and checked on hand-written files
of that shape only.

- A record is `{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version,
  gitBranch?, message?, model?, usageMetadata?, toolCallResult?, systemPayload?}` with
  `type` user | assistant | tool_result | system. `message` is the `Content {role,
  parts}` sent to or received from the model (text, thought, functionCall and
  functionResponse parts).
- One model call per `assistant` record (the recorder writes one per completed
  response, with its `model` and the API's `usageMetadata`, read as the `gemini` reader
  reads it: cached tokens out of the prompt, thoughts billed as output). A record without
  usage is `tokens_estimated`. The stop reason is not recorded: inferred (tool_use when the
  response calls a function, else end_turn), `extra.stop_reason_inferred` says so.
- The request is the conversation before it on the record's branch: every `user` record
  (prompts, and the notification/cron/mid-turn prompts the model also sees) and
  `tool_result` record (one per tool run: a user `Content` of `functionResponse` parts)
  since the session began, in file order. A record whose `parentUuid` is not the latest
  record cuts the conversation back to just after its parent: that is how the recorder
  writes a rewind (`system`/`rewind`, re-rooted at the turn it goes back to), kept as
  `extra.rewound` on the next call.
- A `system` record with subtype `chat_compression` replaces the history the model sees
  with its `systemPayload.compressedHistory` (`extra.compaction` keeps its `info`); other
  system records (slash commands, UI telemetry, titles, file-history snapshots) are not
  sent to the model and are skipped without error.
- Tool results pair by the ids the records carry (`functionCall.id`,
  `functionResponse.id`); a result is an error when `toolCallResult.status` is `error`
  (`cancelled` is not), else when the response holds `error`. Each result also yields a
  `ToolTiming` (from the response's timestamp to the tool_result record's).
- Subagent records (`isSidechain` with an `agentId`) are their own loop, with their own
  conversation. The first call of the session carries `extra.agent_session` (agent,
  session id, project: the record's `cwd`), and the CLI `version` and `gitBranch`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field, replace

from ...coerce import str_or_none
from ...model import Block, Exchange, LineError, Message, ToolTiming
from ..dialects import gemini
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import TranscriptView
from ._index import qwen_code as scoring
from ._index.qwen_code import _has_parts, _is_record
from .base import Adapter, AdapterEvent, Detection
from .registry import register

AGENT = "Qwen Code"


@dataclass(slots=True)
class _Thread:
    """One conversation: the main session or a subagent."""

    key: str
    label: str
    contents: list[Any] = field(default_factory=list)
    lengths: dict[str, int] = field(default_factory=dict)
    tail: str | None = None
    last_time: float | None = None
    calls: int = 0
    rewound: dict[str, Any] | None = None
    compaction: Any = None
    responded_at: float | None = None


@register
class QwenCodeAdapter(Adapter):
    name = "qwen-code"
    label = "Qwen Code session"
    where = (
        "Qwen Code records each session in ~/.qwen/projects/<project>/chats/<session>.jsonl "
        "(older versions: ~/.qwen/tmp/<hash>/chats/)."
    )
    markers = ("uuid", "parentUuid", "sessionId", "type", "message", "usageMetadata", "cwd")

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._threads: dict[str, _Thread] = {}
        self._calls = 0
        self._session: dict[str, Any] = {}

    @staticmethod
    def normalize(raw: Any) -> Message:
        """A Gemini `Content`; a function response written with its tool's `status`
        takes its error flag from it (cancelled runs are not errors)."""
        message = gemini.normalize_content(raw)
        if not any(_status_of(b) is not None for b in message.blocks):
            return message
        return Message(message.role, tuple(_with_status(b) for b in message.blocks))

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not _is_record(value):
            yield LineError(
                record.line,
                "not a Qwen Code record (needs uuid, parentUuid, sessionId and a type of "
                "user, assistant, tool_result or system)",
            )
            return
        for key in ("sessionId", "cwd", "version", "gitBranch"):
            if key not in self._session and isinstance(value.get(key), str):
                self._session[key] = value[key]
        thread = self._thread_for(value)
        self._follow(thread, value)
        kind = value["type"]
        if kind == "system":
            self._system(thread, value)
        elif not _has_parts(value):
            if kind == "assistant" or value.get("message") is not None:
                yield LineError(record.line, f"a '{kind}' record whose message has no parts")
        elif kind == "assistant":
            yield self._exchange(record.line, thread, value)
            self._append(thread, value)
        else:
            if kind == "tool_result":
                yield from self._timings(record.line, thread, value)
            self._append(thread, value, _with_result_status(value))
        thread.tail = value["uuid"]
        thread.lengths[value["uuid"]] = len(thread.contents)
        moment = to_epoch_seconds(value.get("timestamp"))
        if moment is not None:
            thread.last_time = moment

    # -- conversation -------------------------------------------------------------------
    def _thread_for(self, value: dict[str, Any]) -> _Thread:
        agent = str_or_none(value.get("agentId")) if value.get("isSidechain") else None
        session = str_or_none(value.get("sessionId")) or self.source_name
        key = f"qwen-code:{session}" + (f":{agent}" if agent else "")
        thread = self._threads.get(key)
        if thread is None:
            name = str_or_none(value.get("agentName")) or agent
            label = f"subagent {name}" if agent else f"Qwen Code session {session[:8]}"
            thread = self._threads[key] = _Thread(key, label)
        return thread

    def _follow(self, thread: _Thread, value: dict[str, Any]) -> None:
        """A record that does not continue the latest one goes back to its parent."""
        parent = value.get("parentUuid")
        if thread.tail is None or parent == thread.tail or parent not in thread.lengths:
            return
        cut = thread.lengths[parent]
        if cut < len(thread.contents):
            thread.rewound = {"to": parent, "messages_removed": len(thread.contents) - cut}
            thread.contents = thread.contents[:cut]

    def _system(self, thread: _Thread, value: dict[str, Any]) -> None:
        if value.get("subtype") != "chat_compression":
            return
        payload = value.get("systemPayload")
        history = payload.get("compressedHistory") if isinstance(payload, dict) else None
        if isinstance(history, list):
            thread.contents = [c for c in history if isinstance(c, dict)]
            thread.compaction = payload.get("info") if isinstance(payload, dict) else None
            thread.compaction = thread.compaction if thread.compaction is not None else True

    def _append(self, thread: _Thread, value: dict[str, Any], content: Any = None) -> None:
        thread.contents.append(content if content is not None else value["message"])
        if value["type"] == "assistant":
            thread.responded_at = to_epoch_seconds(value.get("timestamp"))

    def _exchange(self, line: int, thread: _Thread, value: dict[str, Any]) -> Exchange:
        message = value["message"]
        response = self.normalize({**message, "role": "model"})
        extra: dict[str, Any] = {"uuid": value["uuid"], "stop_reason_inferred": True}
        if self._calls == 0:
            extra["agent_session"] = self._agent_session()
            for key, name in (("version", "agent_version"), ("gitBranch", "git_branch")):
                if key in self._session:
                    extra[name] = self._session[key]
        if thread.rewound:
            extra["rewound"], thread.rewound = thread.rewound, None
        if thread.compaction is not None:
            extra["compaction"], thread.compaction = thread.compaction, None
        raw_usage = value.get("usageMetadata")
        usage = gemini.usage_from(raw_usage) if isinstance(raw_usage, dict) else None
        self._calls += 1
        thread.calls += 1
        return Exchange(
            line=line,
            messages=TranscriptView(thread.contents, len(thread.contents)),
            normalize=self.normalize,
            model=str_or_none(value.get("model")),
            response=response,
            response_raw=value,
            stop_reason="tool_use" if response.tool_uses else "end_turn",
            usage=usage,
            started_at=thread.last_time,
            ended_at=to_epoch_seconds(value.get("timestamp")),
            extra=extra,
            loop_key=thread.key,
            loop_label=thread.label,
            tokens_estimated=usage is None,
        )

    def _timings(self, line: int, thread: _Thread, value: dict[str, Any]) -> Iterator[ToolTiming]:
        status = _result_status(value)
        for part in value["message"]["parts"]:
            answer = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(answer, dict):
                continue
            tool_id = str_or_none(answer.get("id")) or _call_id(value)
            if tool_id is None:
                continue
            response = answer.get("response")
            yield ToolTiming(
                line,
                tool_id,
                name=str_or_none(answer.get("name")),
                started_at=thread.responded_at,
                ended_at=to_epoch_seconds(value.get("timestamp")),
                is_error=status == "error" if status else gemini.is_error_response(response),
                result_text=gemini.result_text(response),
            )

    def _agent_session(self) -> dict[str, Any]:
        found: dict[str, Any] = {"agent": AGENT}
        if "sessionId" in self._session:
            found["session_id"] = self._session["sessionId"]
        if "cwd" in self._session:
            found["project"] = self._session["cwd"]
        return found


def _call_id(value: dict[str, Any]) -> str | None:
    result = value.get("toolCallResult")
    return str_or_none(result.get("callId")) if isinstance(result, dict) else None


def _result_status(value: dict[str, Any]) -> str | None:
    result = value.get("toolCallResult")
    return str_or_none(result.get("status")) if isinstance(result, dict) else None


def _with_result_status(value: dict[str, Any]) -> dict[str, Any] | None:
    """A tool_result message whose functionResponse parts carry the run's status."""
    status = _result_status(value)
    if value["type"] != "tool_result" or status is None:
        return None
    message = value["message"]
    parts = [
        {**p, "status": status} if isinstance(p, dict) and "functionResponse" in p else p
        for p in message["parts"]
    ]
    return {**message, "parts": parts}


def _status_of(block: Block) -> str | None:
    if block.kind != "tool_result" or not isinstance(block.raw, dict):
        return None
    status = block.raw.get("status")
    return status if isinstance(status, str) else None


def _with_status(block: Block) -> Block:
    status = _status_of(block)
    return block if status is None else replace(block, is_error=status == "error")
