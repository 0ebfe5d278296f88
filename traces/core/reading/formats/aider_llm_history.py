"""aider's `--llm-history-file`: the raw messages of every main-model call, as text.

Where: the file named by `aider --llm-history-file FILE` (or `AIDER_LLM_HISTORY_FILE`);
aider writes nothing unless asked. Read as text lines (`Adapter.reads_text`). No real
file could be shared (SOURCES.md: the ones found have no licence), so the shape is taken
from aider's source and the test file is written following it:

- `InputOutput.log_llm_history(role, content)` appends `f"{role.upper()} {timestamp}"`
  (`datetime.now().isoformat(timespec="seconds")`: local time, no zone, read as UTC)
  and then the content.
- `Coder.send` logs `TO LLM` with `utils.format_messages(messages)`: each message
  after a `-------` line, every line of its content prefixed with the role in capitals
  (`SYSTEM …`, `USER …`, `ASSISTANT …`; list content as `ROLE key: value` lines, a
  function call as `ROLE Function Call: {…}`).
- In its `finally`, it logs `LLM RESPONSE` with `format_content("ASSISTANT", reply)`:
  the reply's lines prefixed `ASSISTANT ` (an interrupted reply is logged partial; an
  empty one as an empty line).

Each `TO LLM` block is one call's request (its messages, rebuilt as Chat messages with
the role lower-cased and the lines joined; the leading system messages are the system
prompt), and the `LLM RESPONSE` block after it is the response; the two timestamps are
the call's start and end. A request with no response block (the log was cut) is a call
with status error, saying so. The log names no model and no usage, so calls have no
model and `tokens_estimated` is set. A line with no role prefix inside a block is
reported with its line number and skipped, as is a second `LLM RESPONSE` block (with
its lines). The first call carries
`extra["agent_session"] = {"agent": "aider"}`; the log names no session or project.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ...model import Exchange, LineError
from ..dialects import openai_chat as chat
from ..records import Record
from ..timeparse import to_epoch_seconds
from ._index import aider_llm_history as scoring
from ._index.aider_llm_history import BLOCK
from .base import Adapter, AdapterEvent, Detection
from .registry import register

SEPARATOR = "-------"
ROLE_LINE = re.compile(
    r"^(?P<role>SYSTEM|USER|ASSISTANT|TOOL|FUNCTION|DEVELOPER)(?: (?P<text>.*))?$"
)


@dataclass
class _Request:
    line: int
    time: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    role: str | None = None
    response_line: int = 0
    response_time: str | None = None
    response_lines: list[str] | None = None


@register
class AiderLlmHistoryAdapter(Adapter):
    name = "aider-llm-history"
    label = "aider LLM history (--llm-history-file)"
    where = (
        "The file aider writes when started with --llm-history-file FILE: every message "
        "sent to the main model (TO LLM) and every reply (LLM RESPONSE)."
    )
    markers = ("TO LLM", "LLM RESPONSE", "SYSTEM", "USER", "ASSISTANT")
    reads_text = True
    normalize = staticmethod(chat.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self.request: _Request | None = None
        self.calls = 0
        self.skipping = False

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        line = record.value
        if not isinstance(line, str):
            yield LineError(record.line, "not a text line (aider's LLM history is text)")
            return
        block = BLOCK.match(line)
        if block:
            if block.group("kind") == "TO LLM":
                yield from self._flush()
                self.skipping = False
                self.request = _Request(record.line, block.group("time"))
                return
            request = self.request
            if request is None or request.response_lines is not None:
                yield LineError(
                    record.line, "an 'LLM RESPONSE' block with no 'TO LLM' block before it"
                )
                yield from self._flush()
                self.skipping = True  # its lines belong to the block just reported
                return
            self._end_message(request)
            request.response_line = record.line
            request.response_time = block.group("time")
            request.response_lines = []
            return
        request = self.request
        if request is None:
            if self.skipping:
                return
            yield LineError(record.line, "text before the first 'TO LLM' block")
            return
        if request.response_lines is None and line.rstrip() == SEPARATOR:
            self._end_message(request)
            return
        role_line = ROLE_LINE.match(line)
        if role_line is None:
            yield LineError(record.line, "a line with no role prefix (SYSTEM, USER, ASSISTANT…)")
            return
        text = role_line.group("text") or ""
        if request.response_lines is not None:
            request.response_lines.append(text)
            return
        role = role_line.group("role").lower()
        if request.role is not None and role != request.role:
            self._end_message(request)
        request.role = role
        request.lines.append(text)

    @staticmethod
    def _end_message(request: _Request) -> None:
        if request.role is not None:
            request.messages.append({"role": request.role, "content": "\n".join(request.lines)})
        request.role = None
        request.lines = []

    def _flush(self) -> Iterator[AdapterEvent]:
        request, self.request = self.request, None
        if request is None:
            return
        self._end_message(request)
        extra: dict[str, Any] = {}
        if self.calls == 0:
            extra["agent_session"] = {"agent": "aider"}
        self.calls += 1
        started = to_epoch_seconds(request.time)
        common: dict[str, Any] = {
            "line": request.line,
            "messages": request.messages,
            "normalize": chat.normalize_message,
            "system": chat.system_of(request.messages),
            "started_at": started,
            "tokens_estimated": True,
            "extra": extra,
        }
        if request.response_lines is None:
            yield Exchange(
                **common,
                status="error",
                error="no LLM RESPONSE block follows this request (the log ends or was cut)",
            )
            return
        reply = {"role": "assistant", "content": "\n".join(request.response_lines)}
        yield Exchange(
            **common,
            response=chat.normalize_message(reply),
            response_raw=reply,
            ended_at=to_epoch_seconds(request.response_time),
        )

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._flush()
