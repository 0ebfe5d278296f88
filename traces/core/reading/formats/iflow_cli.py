"""iFlow CLI sessions: `~/.iflow/projects/<project>/session-<uuid>.jsonl`.

iFlow CLI writes Claude-Code-like lines (`uuid`, `parentUuid`, `sessionId`, `timestamp`,
`type` user/assistant, an Anthropic-shaped `message`, `toolUseResult` on result lines), so
this adapter is the Claude Code reader (`claude_code.py`) with iFlow's differences undone
first. Every choice was checked against the real session of ../shared/agents SOURCES.md
section 21 (agentsview's iFlow test data, glm-4.7).

- Told apart from Claude Code by what Claude Code never writes: `sessionId` is
  `session-<uuid>` (Claude Code: a bare uuid) and assistant `message.id` is
  `response-<ms>[-tool-call_<id>]` (Anthropic: `msg_…`). Either claims the file, at a
  score above Claude Code's. (`version` 1.0.0 is no sign: Claude Code had a 1.0.0 too.)
- Every assistant line has its own `message.id`, so ids cannot group a response: one
  streamed response is split over 2-4 lines written milliseconds apart. A run of
  consecutive assistant lines of one session is ONE call (its id is the run's first
  line's), as agentsview reads it.
- Each line repeats the previous line's `tool_use` block (also across responses: line 13
  repeats line 10's call, already answered). A tool_use whose id was already read is
  dropped, so each call is issued once, by the response that first wrote it.
- `usage` is always `{input_tokens: 0, output_tokens: 0}`: the store keeps no token
  counts, so calls have no usage and are `tokens_estimated`.
- Every assistant line's `parentUuid` is the session's first prompt (results and later
  prompts point at the line they follow): read as a rewind it would cut each request back
  to the prompt, so assistant lines' parents are not followed (user lines' still are).
- `stop_reason` is always null; the Claude Code reader infers it from the blocks
  (`extra.stop_reason_inferred`).
- The first call carries `extra.agent_session` (agent iFlow CLI, the session id, the `cwd`
  of the first line) and `extra.iflow_version`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import replace

from ...model import Exchange
from ..records import Record
from ._index import iflow_cli as scoring
from .base import AdapterEvent, Detection
from .claude_code import ClaudeCodeAdapter
from .claude_code_threads import Response, Thread
from .registry import register


@register
class IFlowCliAdapter(ClaudeCodeAdapter):
    name = "iflow-cli"
    label = "iFlow CLI session"
    where = (
        "iFlow CLI writes one file per session to ~/.iflow/projects/<project>/session-<uuid>.jsonl."
    )
    markers = ("uuid", "parentUuid", "sessionId", "type", "message", "timestamp")

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._run_ids: dict[str, str] = {}
        """Each session's open run of assistant lines: the id its lines share."""
        self._seen_tools: set[str] = set()
        self._first: dict[str, Any] = {}
        self._first_response: int | None = None

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if isinstance(value, dict) and not self._first:
            self._first = value
        if isinstance(value, dict) and isinstance(value.get("message"), dict):
            value = self._undo_repeats(value)
            record = Record(record.line, value)
        yield from super().feed(record)

    def _undo_repeats(self, value: dict[str, Any]) -> dict[str, Any]:
        """One run of assistant lines shares one id; repeated tool_use blocks are dropped."""
        session = str(value.get("sessionId") or "")
        message = value["message"]
        if value.get("type") != "assistant":
            self._run_ids.pop(session, None)
            return value
        run_id = self._run_ids.setdefault(session, str(message.get("id") or value.get("uuid")))
        content = message.get("content")
        if isinstance(content, list):
            kept = []
            for block in content:
                tool_id = block.get("id") if isinstance(block, dict) else None
                if isinstance(tool_id, str) and block.get("type") == "tool_use":
                    if tool_id in self._seen_tools:
                        continue
                    self._seen_tools.add(tool_id)
                kept.append(block)
            content = kept
        lines_id = message.get("id")
        message = {**message, "id": run_id, "content": content}
        if isinstance(lines_id, str) and lines_id != run_id:
            message["iflow_line_id"] = lines_id
        # Every assistant line's parentUuid is the session's first prompt, whatever came
        # between: not a rewind, so it is not followed.
        return {**value, "message": message, "parentUuid": None}

    def _exchange(self, thread: Thread, response: Response) -> Exchange:
        exchange = super()._exchange(thread, response)
        extra = dict(exchange.extra)
        extra.pop("claude_code_version", None)
        if self._first_response is None:
            self._first_response = response.line
        if response.line == self._first_response:
            extra.update(self._first_extra())
        return replace(exchange, usage=None, tokens_estimated=True, extra=extra)

    def _first_extra(self) -> dict[str, Any]:
        first = self._first
        session: dict[str, Any] = {"agent": "iFlow CLI"}
        if isinstance(first.get("sessionId"), str):
            session["session_id"] = first["sessionId"]
        if isinstance(first.get("cwd"), str):
            session["project"] = first["cwd"]
        extra: dict[str, Any] = {"agent_session": session}
        if isinstance(first.get("version"), str):
            extra["iflow_version"] = first["version"]
        return extra
