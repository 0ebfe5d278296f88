"""Gemini CLI chat recordings: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (and `.json`).

Gemini CLI (google-gemini/gemini-cli, its ChatRecordingService) records each session as
messages, not requests; this adapter rebuilds the model calls they imply. Every choice
below was checked against the real sessions of ../shared/agents SOURCES.md section 28.

- JSONL (current versions): line 1 is the header `{sessionId, projectHash, startTime,
  lastUpdated, kind}` (later versions add `directories`); then message records `{id,
  timestamp, type, content}` and `{"$set": {...}}` patches. A `$set.messages` replaces the
  whole list (Gemini CLI writes it at a resume, a compression or a rolled-back turn) and
  `{"$rewindTo": id}` drops that message and every later one (an unknown id drops all).
  Older versions wrote one JSON object `{sessionId, ..., messages: [...]}`: read as a
  header followed by its messages (an error names the message's position in the list).
- A message is written again, whole, with the same `id` when it changes: a `gemini`
  message first without its tool calls, then with them and their results (14 records are
  9 messages, 140 are 87). The last record per id is the message. So the latest `gemini`
  message is held until the next `gemini` message with another id (or the end of the
  file, a rewind or a replaced list): a live tail sees it at once through `held()`, and
  the later record replaces the first. A record for an id already emitted is reported.
- One model call per `gemini` message (the corpus counts define it so). Its request is
  the conversation before it, in Gemini `Content` shape: user prompts (`content`, the text
  sent to the model, not `displayContent`), earlier responses (thoughts as thought parts,
  the text, `functionCall` parts with Gemini CLI's call ids) and, after each response
  with tool calls, one user turn of their `functionResponse` parts, taken from
  `toolCalls[].result` (the result lives inside the call record). Tool ids are the
  recorded ones, so pairing is by id (no name-and-order guessing).
- A tool result is an error when its call's `status` is `error`; `cancelled` (the user
  declined or interrupted) is not, though Gemini CLI then writes an `error` text in the
  response: the call lists it in `extra.cancelled_tool_ids`. Each answered call also
  yields a `ToolTiming` (start: its response's timestamp; end: the call's own
  `timestamp`), so the results of the last response, which no later request carries,
  still count.
- Usage: `tokens {input, output, cached, thoughts, tool, total}` are the API's
  usageMetadata counts (total = input + output + thoughts + tool in the corpus), read as
  the `gemini` reader reads them: cached tokens come out of input, thoughts are billed as
  output. A message without `tokens` gets `tokens_estimated`. The stop reason is not
  recorded: it is inferred (tool_use when the response calls tools, else end_turn) and
  `extra.stop_reason_inferred` says so; a change of model is `extra.model_switched_from`.
- Times: a call ends at its message's `timestamp` and starts at the latest time before it
  (the prompt, or the previous response's last tool result).
- `info`, `error` and `warning` messages are Gemini CLI's own notes to the user (the
  workspace directories, "Request cancelled.", an API error shown in the terminal), never
  sent to the model: they are kept on the call before them (`extra.notices_after`), or on
  the next call when none came before (`extra.notices_before`). Prompts after the last
  response that nothing answered (a cancelled request) are `extra.unanswered_prompts`.
- The first call carries `extra.agent_session` (agent, session id, project: the first of
  the header's `directories` when recorded; the corpus headers have only `projectHash`,
  kept as `extra.project_hash`). A rewind is `extra.rewound` on the next call.
- `logs.json` beside the chats folder (`[{sessionId, messageId, type: user, message,
  timestamp}]`) lists the prompts typed, with no model output: it is recognised, makes no
  call, and `no_call_notice` says to upload the session files instead; read with them it
  adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ...coerce import str_or_none
from ...model import Exchange, LineError, Message, ToolTiming
from ..dialects import gemini
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import TranscriptView
from ._index import gemini_cli as scoring
from ._index.gemini_cli import MESSAGE_TYPES, NOTICE_TYPES, is_header, is_log_entry
from .base import Adapter, AdapterEvent, Detection
from .gemini_cli_records import (
    clean_message,
    contents_of,
    latest_time,
    model_content,
    notice_of,
    prompt_text,
    result_parts,
    status_of,
    with_status,
)
from .registry import register

AGENT = "Gemini CLI"


@dataclass(slots=True)
class _Held:
    """The latest `gemini` message, until a later record proves it final."""

    line: int
    message: dict[str, Any]
    started_at: float | None
    notices_after: list[dict[str, Any]] = field(default_factory=list)
    prompts_after: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


@register
class GeminiCliAdapter(Adapter):
    name = "gemini-cli"
    label = "Gemini CLI chat recording"
    where = (
        "Gemini CLI records each session in ~/.gemini/tmp/<project>/chats/session-*.jsonl "
        "(older versions: session-*.json); logs.json beside chats/ only lists the prompts."
    )
    markers = ("sessionId", "projectHash", "startTime", "id", "type", "content", "$set")

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._contents: list[Any] = []
        self._ids: list[str | None] = []
        self._held: _Held | None = None
        self._emitted: set[str] = set()
        self._notices_before: list[dict[str, Any]] = []
        self._rewound: dict[str, Any] | None = None
        self._last_time: float | None = None
        self._last_model: str | None = None
        self._session: dict[str, Any] = {}
        self._calls = 0
        self._prompts = 0
        self._log_entries = 0
        self._log_sessions: set[str] = set()

    @staticmethod
    def normalize(raw: Any) -> Message:
        """A Gemini `Content`; a function response carries its call's `status`, which
        decides whether it is an error (cancelled calls are not)."""
        message = gemini.normalize_content(raw)
        if not any(status_of(b) is not None for b in message.blocks):
            return message
        blocks = tuple(with_status(b) for b in message.blocks)
        return Message(message.role, blocks)

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    # -- records ------------------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        yield from self._one(record.line, record.value)

    def _one(self, line: int, value: Any) -> Iterator[AdapterEvent]:
        if not isinstance(value, dict):
            yield LineError(line, "not a Gemini CLI record (expected a JSON object)")
        elif is_header(value):
            yield from self._header(line, value)
        elif "$set" in value:
            yield from self._patch(line, value["$set"])
        elif "$rewindTo" in value:
            yield from self._rewind(line, value["$rewindTo"])
        elif is_log_entry(value):
            self._log_entries += 1
            session = str_or_none(value.get("sessionId"))
            if session:
                self._log_sessions.add(session)
        elif value.get("type") in MESSAGE_TYPES:
            yield from self._message(line, value)
        else:
            yield LineError(
                line,
                "not a Gemini CLI record (no session header, message type, $set or $rewindTo)",
            )

    def _header(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        self._session.update({k: v for k, v in value.items() if k != "messages"})
        messages = value.get("messages")
        if messages is None:
            return
        if not isinstance(messages, list):
            yield LineError(line, "the session's 'messages' is not a list; none read")
            return
        for position, message in enumerate(messages, start=1):
            yield from self._one(position, message)

    def _patch(self, line: int, patch: Any) -> Iterator[AdapterEvent]:
        if not isinstance(patch, dict):
            yield LineError(line, "'$set' is not an object; ignored")
            return
        self._session.update({k: v for k, v in patch.items() if k != "messages"})
        if "messages" not in patch:
            return
        messages = patch["messages"]
        if not isinstance(messages, list):
            yield LineError(line, "'$set.messages' is not a list; the message list is kept")
            return
        yield from self._flush()
        self._contents, self._ids = [], []
        for message in messages:
            identifier = message.get("id") if isinstance(message, dict) else None
            if isinstance(identifier, str) and identifier in self._emitted:
                # already read as a call: it is history now, not a call again
                clean, _ = clean_message(line, message)
                self._append_message(clean)
            else:
                yield from self._one(line, message)

    def _rewind(self, line: int, target: Any) -> Iterator[AdapterEvent]:
        if not isinstance(target, str):
            yield LineError(line, "'$rewindTo' is not a message id; ignored")
            return
        yield from self._flush()
        cut = self._ids.index(target) if target in self._ids else 0
        removed = len({i for i in self._ids[cut:] if i is not None})
        self._contents, self._ids = self._contents[:cut], self._ids[:cut]
        self._rewound = {"to": target, "messages_removed": removed}

    def _message(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        identifier = value.get("id")
        if not isinstance(identifier, str) or not identifier:
            yield LineError(line, f"a '{value['type']}' message without an 'id'; skipped")
            return
        clean, problems = clean_message(line, value)
        yield from problems
        kind = clean["type"]
        held = self._held
        if kind in NOTICE_TYPES:
            notice = notice_of(clean)
            (held.notices_after if held is not None else self._notices_before).append(notice)
            return
        if held is not None and held.message["id"] == identifier:
            held.message, held.line = clean, line  # the later record is the message
            return
        if identifier in self._emitted:
            yield LineError(
                line, f"message {identifier} written again after a later response; not re-read"
            )
            return
        if kind == "user":
            self._prompts += 1
            if held is not None:
                held.prompts_after.append((line, clean))
            else:
                self._append_message(clean)
            return
        yield from self._flush()
        self._held = _Held(line, clean, self._last_time)

    # -- calls --------------------------------------------------------------------------
    def _append_message(self, message: dict[str, Any]) -> None:
        for content in contents_of(message):
            self._contents.append(content)
            self._ids.append(message["id"])
        moment = latest_time(message)
        if moment is not None:
            self._last_time = moment

    def _flush(self, closing: bool = False) -> Iterator[AdapterEvent]:
        held = self._held
        if held is None:
            return
        self._held = None
        exchange = self._exchange(held, closing)
        self._emitted.add(held.message["id"])
        self._calls += 1
        self._notices_before = []
        self._rewound = None
        self._last_model = exchange.model or self._last_model
        yield exchange
        yield from _timings(held)
        self._append_message(held.message)
        for _, prompt in held.prompts_after:
            self._append_message(prompt)

    def _exchange(self, held: _Held, closing: bool) -> Exchange:
        message = held.message
        response = model_content(message)
        calls = message["toolCalls"]
        extra: dict[str, Any] = {"message_id": message["id"], "stop_reason_inferred": True}
        if self._calls == 0:
            extra["agent_session"] = self._agent_session()
            if isinstance(self._session.get("projectHash"), str):
                extra["project_hash"] = self._session["projectHash"]
        model = str_or_none(message.get("model"))
        if model and self._last_model and model != self._last_model:
            extra["model_switched_from"] = self._last_model
        cancelled = [c["id"] for c in calls if c.get("status") == "cancelled"]
        if cancelled:
            extra["cancelled_tool_ids"] = cancelled
        if self._notices_before:
            extra["notices_before"] = list(self._notices_before)
        if held.notices_after:
            extra["notices_after"] = list(held.notices_after)
        if closing and held.prompts_after:
            extra["unanswered_prompts"] = [prompt_text(p) for _, p in held.prompts_after]
        if self._rewound:
            extra["rewound"] = self._rewound
        tokens = message.get("tokens")
        usage = None
        if isinstance(tokens, dict):
            usage = gemini.usage_from(
                {
                    "promptTokenCount": tokens.get("input"),
                    "toolUsePromptTokenCount": tokens.get("tool"),
                    "cachedContentTokenCount": tokens.get("cached"),
                    "candidatesTokenCount": tokens.get("output"),
                    "thoughtsTokenCount": tokens.get("thoughts"),
                }
            )
        session = str_or_none(self._session.get("sessionId"))
        return Exchange(
            line=held.line,
            messages=TranscriptView(self._contents, len(self._contents)),
            normalize=self.normalize,
            model=model,
            response=self.normalize(response),
            response_raw=message,
            stop_reason="tool_use" if calls else "end_turn",
            usage=usage,
            started_at=held.started_at,
            ended_at=to_epoch_seconds(message.get("timestamp")),
            extra=extra,
            loop_key=f"gemini-cli:{session or self.source_name}",
            loop_label=f"Gemini CLI session {session[:8]}" if session else "Gemini CLI session",
            tokens_estimated=usage is None,
        )

    def _agent_session(self) -> dict[str, Any]:
        found: dict[str, Any] = {"agent": AGENT}
        session = str_or_none(self._session.get("sessionId"))
        if session:
            found["session_id"] = session
        directories = self._session.get("directories")
        if isinstance(directories, list) and directories and isinstance(directories[0], str):
            found["project"] = directories[0]
        return found

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._flush(closing=True)

    def held(self) -> list[tuple[Exchange, bool]]:
        """The latest response: Gemini CLI writes it again once its tools have run, so it
        is complete once a later record (a prompt, a note) follows it."""
        held = self._held
        if held is None:
            return []
        followed = bool(held.prompts_after or held.notices_after)
        return [(self._exchange(held, closing=False), followed)]

    def no_call_notice(self) -> str | None:
        if self._calls:
            return None
        if self._log_entries:
            sessions = len(self._log_sessions)
            return (
                f"This is Gemini CLI's prompt log (logs.json), an index of the "
                f"{self._log_entries} prompt(s) typed in {sessions} session(s), with no "
                "model output: upload the session files of the chats/ folder beside it "
                "(chats/session-*.jsonl) instead."
            )
        if self._session or self._prompts:
            session = str_or_none(self._session.get("sessionId")) or "?"
            return (
                f"Read as a Gemini CLI session ({session}), but it holds "
                f"{self._prompts} prompt(s) and no model response (each request was "
                "cancelled or never answered): there is no call to show."
            )
        return None


def _timings(held: _Held) -> Iterator[ToolTiming]:
    started = to_epoch_seconds(held.message.get("timestamp"))
    for call in held.message["toolCalls"]:
        answers = [p["functionResponse"] for p in result_parts(call) if "functionResponse" in p]
        if not answers:
            continue  # not answered (yet): the call stays dangling
        yield ToolTiming(
            held.line,
            call["id"],
            name=str_or_none(call.get("name")),
            started_at=started,
            ended_at=to_epoch_seconds(call.get("timestamp")),
            is_error=call.get("status") == "error",
            result_text="\n".join(gemini.result_text(a.get("response")) for a in answers),
            input=call.get("args"),
        )
