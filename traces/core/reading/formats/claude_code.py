"""Claude Code session transcripts: `~/.claude/projects/<project>/<session>.jsonl`.

Claude Code logs messages, not requests; this adapter rebuilds the API calls they imply.
Every choice below was checked against the real sessions of SOURCES.md section 1.

- One API response is written as several `assistant` lines, one per content block, all
  with the same `message.id`; they become ONE call whose response holds every block in file
  order. Earlier lines carry partial streaming usage (output_tokens 10, 10, 10, 211), so the
  call takes the usage of the line with the highest output_tokens (the latest on ties),
  never a sum. `stop_reason` is null on every line since Claude Code 2.1.38 (only on the
  last line in 2.0.x); when no line has one it is inferred (tool_use when the response asks
  for a tool, else end_turn) and `extra.stop_reason_inferred` says so.
- The request of a call is the conversation before it, in file order: the user lines since
  the previous response are merged into ONE user message, because Claude Code writes each
  tool_result on its own line (four parallel results, four lines) while the Messages API
  needs every result of one assistant turn in the single next user message (it also merges
  consecutive same-role turns). File order, not the `parentUuid` chain, gives the
  transcript: Claude Code hangs each tool_result off its own tool_use line and may write a
  result between two blocks of a still-streaming response, so walking parents from the
  newest line skips sibling results. `parentUuid` is used only to notice a rewind (a prompt
  or a response that continues an earlier point: the transcript is cut back there).
- Times: a call starts at the timestamp of the latest transcript line written before its
  response (the request cannot have left earlier; for a tool loop this is the last tool
  result) and ends at the timestamp of the response's last line.
- `system` lines with subtype `compact_boundary` end the conversation's history: the next
  request starts again from the compact summary (`extra.compaction`); `api_error` system
  lines (one failed try, retried) and `isApiErrorMessage` assistant lines (the final failure)
  become failed calls. `summary` lines (summary + leafUuid pointing outside the file) are kept
  as `extra.summaries`; `progress`, `file-history-snapshot` and `queue-operation` lines are
  not calls and not errors.
- Each tool_result line also yields a `ToolTiming`: the tool started when its tool_use
  block was written and ended when its result was (permission prompts included), and the
  result text is kept, so a result that no later request carried (the user quit after a
  rejection, or a compaction came first) still counts as the tool's answer.
- Interruptions ("[Request interrupted by user...]") and rejected tool uses ("The user
  doesn't want to proceed...", is_error) stay in the transcript as written; the call whose
  response the user acted on gets `extra.interrupted` / `extra.rejected_tool_use_ids`.
- Each conversation is a loop: the session (`sessionId`), or one subagent
  (`sessionId:agent-<agentId>`; old flat `agent-<id>.jsonl` files name it in the file name).
  A subagent is attached to the Task/Agent tool call that spawned it, found from the main
  session's tool_result (`toolUseResult.agentId`), its `agent_progress` lines
  (`data.agentId` + `parentToolUseID`) or, failing those, the Task prompt equal to the
  subagent's first message. Compaction agents (`agent-acompact-*`) point their parents into
  the main session; uploaded with it, their request starts with that conversation.

Several files uploaded together each get their own adapter (see `ingest.analyze_files`);
what one file teaches the next (anchors, subagent links) lives in the trace's shared state
(`claude_code_threads`). Responses are assembled as the Agent SDK's are (`claude_response`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import text_of
from ...model import Exchange, LineError, ToolTiming
from ..dialects import anthropic
from ..dialects import claude_code as cc
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import NormalizedOnce, TranscriptView
from ._index import claude_code as scoring
from .base import Adapter, AdapterEvent, Detection
from .claude_code_threads import Response, Shared, Thread
from .claude_code_threads import text_or_none as _text
from .claude_response import shared_value
from .registry import register

AGENT_FILE = re.compile(r"agent-([A-Za-z0-9_-]+)\.jsonl$")


@register
class ClaudeCodeAdapter(Adapter):
    name = "claude-code"
    label = "Claude Code session transcript"
    where = (
        "Claude Code writes one file per session to ~/.claude/projects/<project>/<session>.jsonl; "
        "subagents are beside it (agent-<id>.jsonl) or in <session>/subagents/. Upload the "
        "session first, then its subagent files, to see each subagent under its Task call."
    )
    normalize = staticmethod(anthropic.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._read_once = NormalizedOnce(anthropic.normalize_message)
        self.normalize = self._read_once
        # The files of one upload (a session and its subagents) teach each other.
        self._shared: Shared = self.shared.setdefault(self.name, Shared())
        self._threads: dict[str, Thread] = {}
        self._seen_uuids: set[str] = set()
        self._tool_started: dict[str, tuple[float | None, str | None]] = {}
        self._summaries: list[dict[str, Any]] = []
        match = AGENT_FILE.search(source_name or "")
        self._file_agent_id = match.group(1) if match else None
        stem = (source_name or "").rsplit("/", 1)[-1].removesuffix(".jsonl")
        self._default_session = stem or "session"

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    # -- reading lines ------------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not isinstance(value, dict):
            yield LineError(record.line, "expected a JSON object (one Claude Code session line)")
            return
        kind = value.get("type")
        if not isinstance(kind, str):
            yield LineError(record.line, "no 'type' field: not a Claude Code session line")
            return
        uuid = value.get("uuid")
        if kind in ("user", "assistant"):
            if isinstance(uuid, str) and uuid in self._seen_uuids:
                return  # the same line written twice (resumed sessions repeat history)
            if isinstance(uuid, str):
                self._seen_uuids.add(uuid)
            yield from self._message_line(record.line, kind, value)
        elif kind == "system":
            yield from self._system_line(record.line, value)
        elif kind == "progress":
            self._shared.learn_from_progress(value, self._default_session)
            self._shared.pass_through(value)
        elif kind == "summary":
            self._summaries.append(
                {"summary": value.get("summary"), "leaf_uuid": value.get("leafUuid")}
            )
        else:
            self._shared.pass_through(value)

    def close(self) -> Iterator[AdapterEvent]:
        open_threads = sorted(
            (t for t in self._threads.values() if t.response is not None),
            key=lambda t: t.response.line if t.response else 0,
        )
        for thread in open_threads:
            if self._summaries and thread.response is not None:
                thread.response.extra["summaries"] = self._summaries
                self._summaries = []
            yield from self._emit(thread)

    def held(self) -> list[tuple[Exchange, bool]]:
        """Each conversation's response still being assembled: Claude Code writes one line
        per block, so the last response of a loop is complete only when a later line
        proves it (or the file ends)."""
        threads = sorted(
            (t for t in self._threads.values() if t.response is not None),
            key=lambda t: t.response.line if t.response else 0,
        )
        return [
            (self._exchange(t, t.response), t.response.followed)
            for t in threads
            if t.response is not None
        ]

    def _message_line(self, line: int, kind: str, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        message = value.get("message")
        if not isinstance(message, dict):
            yield LineError(line, f"a '{kind}' line without a 'message' object")
            return
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            yield LineError(line, "message.content is neither text nor a list of blocks")
            return
        thread = self._thread_for(value)
        if kind == "user":
            yield from self._user_line(line, thread, value, message)
            return
        failure = cc.synthetic_error(value, message)
        if failure is not None:
            yield from self._synthetic_failure(line, thread, value, failure)
        elif message.get("model") == "<synthetic>":
            self._shared.anchor(value, thread)  # Claude Code's own note, never sent to the model
        else:
            yield from self._assistant_line(line, thread, value, message)

    def _system_line(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        subtype = value.get("subtype")
        if subtype == "compact_boundary":
            thread = self._thread_for(value)
            yield from self._emit(thread)
            thread.messages, thread.pending = [], []
            thread.borrowed = thread.borrowed_from = None
            metadata = value.get("compactMetadata")
            thread.notes["compaction"] = {
                **(metadata if isinstance(metadata, dict) else {}),
                "boundary_line": line,
                "logical_parent_uuid": value.get("logicalParentUuid"),
            }
            self._shared.anchor(value, thread)
        elif subtype == "api_error":
            thread = self._thread_for(value)
            yield from self._emit(thread)
            error, status = cc.api_error(value)
            retry = {
                key: value[key]
                for key in ("retryAttempt", "maxRetries", "retryInMs")
                if key in value
            }
            yield self._failed_call(line, thread, value, error, status, {"retry": retry})
            self._shared.anchor(value, thread)
        else:
            self._shared.pass_through(value)

    # -- conversations ------------------------------------------------------------------
    def _thread_for(self, value: dict[str, Any]) -> Thread:
        """The conversation a line belongs to: the session, a subagent or a sidechain."""
        session = _text(value.get("sessionId")) or self._default_session
        sidechain = value.get("isSidechain") is True
        agent = _text(value.get("agentId")) or (self._file_agent_id if sidechain else None)
        if agent:
            key = f"{session}:agent-{agent}"
        elif sidechain:
            parent = self._shared.parent_anchor(value)
            if parent and parent.thread.sidechain and parent.thread.session_id == session:
                return parent.thread
            key = f"{session}:sidechain-{str(value.get('uuid') or '')[:8]}"
        else:
            key = session
        thread = self._threads.get(key)
        if thread is None:
            thread = Thread(key=key, session_id=session, agent_id=agent, sidechain=sidechain)
            self._threads[key] = thread
        return thread

    def _follow_parent(
        self, thread: Thread, value: dict[str, Any], may_rewind: bool
    ) -> Iterator[AdapterEvent]:
        """Cut the transcript back when a line continues an earlier point of it (a rewind),
        or take a compaction agent's prefix from the conversation it summarises."""
        anchor = self._shared.parent_anchor(value)
        if anchor is None:
            return
        if anchor.thread is thread:
            rewound = anchor.messages is thread.messages and anchor.count < len(thread.messages)
            if may_rewind and rewound:
                yield from self._emit(thread)
                thread.messages = anchor.messages[: anchor.count]
                thread.pending = anchor.pending[: anchor.pending_count]
                thread.notes["rewound_to"] = value.get("parentUuid")
        elif thread.compaction_agent and anchor is not thread.borrowed_from:
            thread.borrowed = anchor.prefix()
            thread.borrowed_from = anchor

    def _take_notes(self, thread: Thread) -> dict[str, Any]:
        """What happened since the last call (compaction, rewind, summaries), for the next."""
        notes, thread.notes = thread.notes, {}
        if self._summaries:
            notes["summaries"], self._summaries = self._summaries, []
        return notes

    def _request(self, thread: Thread) -> Sequence[Any]:
        """What a request sent now would carry; the message objects are shared."""
        if not thread.pending and not thread.borrowed:
            return TranscriptView(thread.messages, len(thread.messages))
        request = list(thread.messages)
        if thread.pending:
            request.append(cc.merge_user_messages(thread.pending))
        if thread.borrowed:
            request = cc.join_transcripts(thread.borrowed, request)
        return request

    # -- user lines ---------------------------------------------------------------------
    def _user_line(
        self, line: int, thread: Thread, value: dict[str, Any], message: dict[str, Any]
    ) -> Iterator[AdapterEvent]:
        content = message.get("content")
        results = cc.tool_results(content)
        is_prompt = not results and value.get("isMeta") is not True
        yield from self._follow_parent(thread, value, may_rewind=is_prompt)
        if thread.first_prompt is None and not results:
            thread.first_prompt = cc.first_text(content)
        moment = to_epoch_seconds(value.get("timestamp"))
        self._shared.learn_from_results(thread, value, results)
        self._note_user_action(thread, value, content, results)
        thread.pending.append(message)
        if moment is not None:
            thread.last_time = moment
        self._shared.anchor(value, thread)
        for block in results:
            tool_id = block.get("tool_use_id")
            started = self._tool_started.pop(tool_id, None) if isinstance(tool_id, str) else None
            if started is not None and isinstance(tool_id, str):
                yield ToolTiming(
                    line,
                    tool_id,
                    started[1],
                    started_at=started[0],
                    ended_at=moment,
                    is_error=bool(block.get("is_error")),
                    result_text=text_of(block.get("content")),
                )

    def _note_user_action(
        self, thread: Thread, value: dict[str, Any], content: Any, results: list[dict[str, Any]]
    ) -> None:
        """Mark the response the user answered: interrupted, tools rejected or stopped."""
        response = thread.response
        interruption = cc.interruption_text(content)
        if response is None:
            if interruption:
                thread.notes["interrupted_before_response"] = True
            return
        if interruption:
            if interruption.startswith(cc.INTERRUPTION_FOR_TOOL_USE):
                response.interrupted = "during_tool_use"
            elif not response.followed:
                response.interrupted = "during_response"
            else:
                response.interrupted = "before_next_response"
        outcome = value.get("toolUseResult")
        for block in results:
            tool_id = block.get("tool_use_id")
            if not isinstance(tool_id, str):
                continue
            if cc.is_rejection(block, outcome):
                response.rejected.append(tool_id)
            elif cc.is_interrupted_result(block, outcome):
                response.interrupted_tools.append(tool_id)
            summary = cc.tool_result_summary(outcome) if len(results) == 1 else None
            if summary:
                response.tool_results[tool_id] = summary
        response.followed = True

    # -- assistant lines ----------------------------------------------------------------
    def _assistant_line(
        self, line: int, thread: Thread, value: dict[str, Any], message: dict[str, Any]
    ) -> Iterator[AdapterEvent]:
        message_id = _text(message.get("id")) or _text(value.get("uuid")) or f"line-{line}"
        response = thread.response
        if response is None or response.message_id != message_id:
            yield from self._emit(thread)
            yield from self._follow_parent(thread, value, may_rewind=True)
            response = self._start_response(line, thread, value, message, message_id)
        self._add_block_line(response, value, message)
        thread.model = response.model or thread.model
        self._shared.learn_from_calls(thread, message)
        self._shared.anchor(value, thread)

    def _start_response(
        self,
        line: int,
        thread: Thread,
        value: dict[str, Any],
        message: dict[str, Any],
        message_id: str,
    ) -> Response:
        if thread.pending:
            thread.messages.append(cc.merge_user_messages(thread.pending))
            thread.pending = []
        extra: dict[str, Any] = {"message_id": message_id, "session_id": thread.session_id}
        if thread.agent_id:
            extra["agent_id"] = thread.agent_id
        if isinstance(value.get("version"), str):
            extra["claude_code_version"] = value["version"]
        extra.update(self._take_notes(thread))
        response = Response.first_line(line, message_id, self._request(thread), message, extra)
        response.started_at = thread.last_time
        if response.started_at is None:
            response.started_at = to_epoch_seconds(value.get("timestamp"))
        thread.messages.append(response.transcript_message)
        thread.response = response
        return response

    def _add_block_line(
        self, response: Response, value: dict[str, Any], message: dict[str, Any]
    ) -> None:
        """Add one line's blocks, usage snapshot and stop reason to its response."""
        blocks = response.blocks
        new = cc.content_blocks(message.get("content"))
        if len(new) > max(1, len(blocks)) and new[: len(blocks)] == blocks:
            new = new[len(blocks) :]  # a line that repeats the blocks so far, then adds more
        response.add(message, new)
        response.model = shared_value("model", _text(message.get("model"))) or response.model
        request_id = value.get("requestId")
        if isinstance(request_id, str):
            response.extra.setdefault("request_id", request_id)
        moment = to_epoch_seconds(value.get("timestamp"))
        if moment is not None:
            response.ended_at = moment
        for block in new:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tool_id = block.get("id")
                if isinstance(tool_id, str):
                    self._tool_started[tool_id] = (moment, _text(block.get("name")))

    # -- calls --------------------------------------------------------------------------
    def _emit(self, thread: Thread) -> Iterator[AdapterEvent]:
        response = thread.response
        if response is None:
            return
        thread.response = None
        exchange = self._exchange(thread, response)
        self._read_once.keep(response.transcript_message, exchange.response)
        yield exchange

    def _exchange(self, thread: Thread, response: Response) -> Exchange:
        notes: dict[str, Any] = {}
        if response.interrupted:
            notes["interrupted"] = True
            notes["interruption"] = response.interrupted
        if response.rejected:
            notes["rejected_tool_use_ids"] = list(response.rejected)
        if response.interrupted_tools:
            notes["interrupted_tool_use_ids"] = list(response.interrupted_tools)
        if response.tool_results:
            notes["tool_results"] = dict(response.tool_results)
        return response.exchange(
            self.normalize,
            notes,
            started_at=response.started_at,
            ended_at=response.ended_at,
            loop_key=thread.key,
            loop_label=self._shared.label(thread),
            parent_tool_id=self._shared.parent_tool(thread),
        )

    def _synthetic_failure(
        self, line: int, thread: Thread, value: dict[str, Any], error: str
    ) -> Iterator[AdapterEvent]:
        """Claude Code gave up on a call and wrote an "API Error" message in its place."""
        yield from self._emit(thread)
        status = value.get("apiErrorStatus")
        extra = {"synthetic_message": True}
        if isinstance(value.get("error"), str):
            extra["error_kind"] = value["error"]
        yield self._failed_call(
            line, thread, value, error, status if isinstance(status, int) else None, extra
        )
        self._shared.anchor(value, thread)

    def _failed_call(
        self,
        line: int,
        thread: Thread,
        value: dict[str, Any],
        error: str,
        status: int | None,
        extra: dict[str, Any],
    ) -> Exchange:
        moment = to_epoch_seconds(value.get("timestamp"))
        started = thread.last_time if thread.last_time is not None else moment
        if moment is not None:
            thread.last_time = moment  # a retry cannot leave before this try failed
        return Exchange(
            line=line,
            messages=self._request(thread),
            normalize=self.normalize,
            model=thread.model,
            started_at=started,
            ended_at=moment,
            status="error",
            http_status=status,
            error=error,
            extra={"session_id": thread.session_id, **self._take_notes(thread), **extra},
            loop_key=thread.key,
            loop_label=self._shared.label(thread),
            parent_tool_id=self._shared.parent_tool(thread),
        )
