"""Cline SDK / CLI v2 sessions: `~/.cline/data/sessions/<id>/<id>.messages.json` + `<id>.json`.

The new Cline SDK (the CLI and the SDK's desktop app; not the VS Code extension's
`tasks/<id>/` folders, read by `cline_task`) writes each session as one JSON document
`{version, updated_at, agent, sessionId, system_prompt, messages[]}` beside a metadata file
`<id>.json` (`session.json` in exports). Every choice below was checked against the real
session of SOURCES.md section 23 and its two compacted copies.

- Messages are Anthropic-shaped (`text`, `tool_use`, `tool_result{tool_use_id, is_error?}`)
  plus Cline's own `file` block (an attached file: path and content, shown as text) and
  tool results whose content is a list of `{query, result}` objects (shown as their text).
  Each carries `id`, `ts` (epoch ms) and, on assistant messages, `modelInfo{id, provider,
  family}` and `metrics{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cost}`.
- Each assistant message is one model call; its request is every message before it, the
  system prompt is `system_prompt`. The store keeps no stop reason: tool_use when the reply
  asks for a tool, else end_turn (`extra.stop_reason_inferred`).
- Usage: `inputTokens` INCLUDES the cache reads (checked on the real session's per-message
  cost: 35,912 in / 34,332 read costs $0.065, which only the inclusive reading explains),
  so the uncached input is inputTokens - cacheReadTokens - cacheWriteTokens (never below
  0). A message without metrics (the basic compaction drops them) has no usage and is
  `tokens_estimated`. The per-message `cost` is kept as `extra.cost_usd`; the model
  (`modelInfo.id`) may change mid-session (the real one ends on mistralai/voxtral), and
  each call names its own, with `extra.model_provider` / `model_family`.
- Times: a call starts at the `ts` of the message before it and ends at its own `ts`.
  Each tool result yields a `ToolTiming` (from its tool_use's message `ts` to the result's),
  with the result text, so a result no later request carried still answers its call.
- Compacted sessions (`metadata.kind` "compaction" / "compaction_summary" on the first
  message) are read as they are: the summary is the first user message; the call after it
  gets `extra.compaction` with the metadata (reason, messagesRemoved, usageBefore).
- `session.json` (status, provider, model, cwd, fork, messages_path) holds no call: alone
  it is recognised and said so (`no_call_notice`); read in the same upload as the
  messages (the ingest reads it first) it supplies the project (`cwd`), the provider, the
  model for calls without `modelInfo`, and the fork it came from, through
  `shared["cline-sdk"]`, and nothing else.
- The first call carries `extra.agent_session` {agent "Cline", session_id, project}; the
  SDK's `agent` field ("lead", a team agent's name) is `extra.cline_agent`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, non_negative, str_or_none, text_of
from ...model import Block, Exchange, LineError, Message, ToolTiming, Usage
from ..dialects import anthropic
from ..records import Record
from ..transcript import TranscriptView
from ._index import cline_sdk as scoring
from ._index.cline_sdk import is_session_metadata
from .base import Adapter, AdapterEvent, Detection
from .registry import register

AGENT = "Cline"


def block_from(raw: Any) -> Block:
    """An Anthropic block, or one of Cline's own: `file`, tool results of `{query, result}`."""
    if isinstance(raw, dict) and raw.get("type") == "file":
        text = f"[file {raw.get('path') or ''}]\n{text_of(raw.get('content'))}".rstrip()
        return Block("text", text=text, raw=raw)
    if isinstance(raw, dict) and raw.get("type") == "tool_result":
        return Block(
            "tool_result",
            text=result_text(raw.get("content")),
            tool_id=str_or_none(raw.get("tool_use_id")),
            name=str_or_none(raw.get("name")),
            is_error=raw.get("is_error") is True,
            raw=raw,
        )
    return anthropic.block_from(raw)


def result_text(content: Any) -> str:
    """A tool result's content: text, Anthropic parts, or Cline's `{query, result}` list."""
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, dict) and "result" in part and "type" not in part:
                query = str_or_none(part.get("query"))
                body = text_of(part.get("result"))
                pieces.append(f"{query}\n{body}" if query else body)
            else:
                pieces.append(text_of([part]))
        return "\n".join(pieces)
    return text_of(content)


def result_timings(
    line: int,
    content: Any,
    started: dict[str, float | None],
    moment: float | None,
    text: Callable[[Any], str] = result_text,
) -> Iterator[AdapterEvent]:
    """A `ToolTiming` per Anthropic `tool_result` block of a message's content (Cline's
    SDK sessions and its extension's task history write the same blocks): from when its
    `tool_use` was written (`started`) to this message's time."""
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        tool_id = str_or_none(block.get("tool_use_id"))
        if tool_id is None:
            yield LineError(line, "a tool_result without a tool_use_id")
            continue
        yield ToolTiming(
            line,
            tool_id,
            str_or_none(block.get("name")),
            started_at=started.get(tool_id),
            ended_at=moment,
            is_error=block.get("is_error") is True,
            result_text=text(block.get("content")),
        )


def normalize_message(raw: Any) -> Message:
    if not isinstance(raw, dict):
        return Message("unknown", (anthropic.block_from(raw),))
    content = raw.get("content")
    if isinstance(content, list):
        blocks = tuple(block_from(item) for item in content)
    elif content is None:
        blocks = ()
    else:
        blocks = (anthropic.block_from(str(content)),)
    return Message(str(raw.get("role") or "unknown"), blocks)


def usage_from(metrics: Any) -> Usage | None:
    """`metrics`: inputTokens includes the cache reads (and writes)."""
    if not isinstance(metrics, dict) or not any(
        key in metrics for key in ("inputTokens", "outputTokens")
    ):
        return None
    total = non_negative(metrics.get("inputTokens"))
    read = min(non_negative(metrics.get("cacheReadTokens")), total)
    written = min(non_negative(metrics.get("cacheWriteTokens")), total - read)
    return Usage(
        input_tokens=total - read - written,
        output_tokens=non_negative(metrics.get("outputTokens")),
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def seconds(ms: Any) -> float | None:
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms <= 0:
        return None
    return ms / 1000


@register
class ClineSdkAdapter(Adapter):
    name = "cline-sdk"
    label = "Cline SDK / CLI session"
    where = (
        "The Cline CLI (v2) and SDK keep each session in ~/.cline/data/sessions/<id>/: "
        "upload <id>.messages.json (the conversation), with <id>.json beside it to add "
        "the project and model."
    )
    markers = ("sessionId", "system_prompt", "messages", "session_id", "messages_path")
    normalize = staticmethod(normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._shared: dict[str, Any] = self.shared.setdefault(self.name, {})
        self._metadata: dict[str, Any] | None = None
        self._calls = 0

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def no_call_notice(self) -> str | None:
        if self._metadata is None or self._calls:
            return None
        session = self._metadata.get("session_id")
        return (
            f"Read as Cline SDK session metadata (session.json) of session {session}: it "
            "records the status, model and project but no messages. Upload "
            f"{session}.messages.json from the same folder (alone or with this file)."
        )

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if is_session_metadata(value):
            self._metadata = value
            self._shared["metadata"] = value
            return
        if not isinstance(value, dict):
            yield LineError(record.line, "expected a Cline SDK session object")
            return
        messages = value.get("messages")
        if not isinstance(messages, list):
            yield LineError(record.line, "a Cline session without a 'messages' list")
            return
        errors: list[AdapterEvent] = []
        events: list[AdapterEvent] = []
        for event in self._read(record.line, value, messages):
            (errors if isinstance(event, LineError) else events).append(event)
        yield from errors  # before the calls, so the record still counts as read
        yield from events

    def _read(
        self, line: int, value: dict[str, Any], messages: list[Any]
    ) -> Iterator[AdapterEvent]:
        session = str_or_none(value.get("sessionId")) or self.source_name or "session"
        transcript: list[Any] = []
        tool_started: dict[str, float | None] = {}
        last_ts: float | None = None
        compaction: dict[str, Any] | None = None
        for position, message in enumerate(messages, start=1):
            where = f"message #{position}"
            if not isinstance(message, dict):
                yield LineError(line, f"{where} is not an object")
                continue
            where = f"message #{position} ({message.get('id') or 'no id'})"
            role = message.get("role")
            content = message.get("content")
            if role not in ("user", "assistant"):
                yield LineError(line, f"{where} has role {role!r}, not user or assistant")
                continue
            if not isinstance(content, (list, str)):
                yield LineError(line, f"{where}: content is neither text nor a list of blocks")
                continue
            moment = seconds(message.get("ts"))
            metadata = dict_or_empty(message.get("metadata"))
            if str(metadata.get("kind") or "").startswith("compaction"):
                compaction = {k: v for k, v in metadata.items() if k != "summary"}
            if role == "assistant":
                yield self._exchange(line, value, session, transcript, message, last_ts, compaction)
                compaction = None
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        tool_id = str_or_none(block.get("id"))
                        if tool_id:
                            tool_started[tool_id] = moment
            else:
                yield from result_timings(line, content, tool_started, moment)
            transcript.append(message)
            if moment is not None:
                last_ts = moment

    def _exchange(
        self,
        line: int,
        value: dict[str, Any],
        session: str,
        transcript: list[Any],
        message: dict[str, Any],
        started: float | None,
        compaction: dict[str, Any] | None,
    ) -> Exchange:
        response = normalize_message(message)
        info = dict_or_empty(message.get("modelInfo"))
        meta = dict_or_empty(self._shared.get("metadata"))
        usage = usage_from(message.get("metrics"))
        metrics = dict_or_empty(message.get("metrics"))
        extra: dict[str, Any] = {
            "message_id": message.get("id"),
            "session_id": session,
            "stop_reason_inferred": True,
            "cost_usd": metrics.get("cost"),
            "model_provider": info.get("provider") or meta.get("provider"),
            "model_family": info.get("family"),
            "cline_agent": value.get("agent"),
        }
        if compaction:
            extra["compaction"] = compaction
        if self._calls == 0:
            extra["agent_session"] = self._agent_session(session, meta)
            fork = dict_or_empty(dict_or_empty(meta.get("metadata")).get("fork"))
            if fork.get("forkedFromSessionId"):
                extra["forked_from_session"] = fork["forkedFromSessionId"]
        self._calls += 1
        return Exchange(
            line=line,
            messages=TranscriptView(transcript, len(transcript)),
            normalize=normalize_message,
            system=value.get("system_prompt"),
            model=str_or_none(info.get("id")) or str_or_none(meta.get("model")),
            response=response,
            response_raw=message,
            stop_reason="tool_use" if response.tool_uses else "end_turn",
            usage=usage,
            started_at=started,
            ended_at=seconds(message.get("ts")),
            extra={k: v for k, v in extra.items() if v is not None},
            loop_key=f"cline-sdk {session}",
            loop_label=f"Cline session {session}",
            tokens_estimated=usage is None,
        )

    @staticmethod
    def _agent_session(session: str, meta: dict[str, Any]) -> dict[str, Any]:
        known = {"agent": AGENT, "session_id": session}
        project = str_or_none(meta.get("cwd")) or str_or_none(meta.get("workspace_root"))
        if project:
            known["project"] = project
        return known
