"""Rebuild loops from exchanges: group calls by transcript prefix, pair tool calls by id.

The builder is incremental (`add` one exchange at a time) so uploads, the CLI and live
tail share it. It keeps only each loop's latest request for prefix comparison; calls
store what their request appended, so memory grows with unique content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from .bounds import bounded
from .credentials import mask_secrets
from .model import (
    Call,
    Exchange,
    IdCollision,
    LineError,
    Loop,
    Message,
    ParallelBatch,
    ToolRun,
    ToolTiming,
    Trace,
)

RESULT_PREVIEW_CHARS = 4000


@dataclass(slots=True)
class _LoopState:
    index: int
    first_key: bytes
    last_messages: Sequence[Any]
    last_call: int
    last_status: str
    model: str | None
    key: str | None = None
    label: str | None = None
    parent_tool_id: str | None = None
    calls: list[int] = field(default_factory=list)
    runs_by_id: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Update:
    """What one `add` changed: the new call and every tool run created or updated."""

    call: Call
    tool_runs: tuple[ToolRun, ...]


class TraceBuilder:
    """Accumulates exchanges into calls, loops, tool runs and batches."""

    def __init__(self, format_name: str, detection_reason: str = "") -> None:
        self.format_name = format_name
        self.detection_reason = detection_reason
        self.calls: list[Call] = []
        self.tool_runs: list[ToolRun] = []
        self.batches: list[ParallelBatch] = []
        self.line_errors: list[LineError] = []
        self._loops: list[_LoopState] = []
        self._loops_by_first: dict[bytes, list[_LoopState]] = {}
        self._runs_by_id: dict[str, int] = {}
        self._loops_by_key: dict[str, _LoopState] = {}
        self._early_timings: dict[str, ToolTiming] = {}
        self.id_collisions: list[IdCollision] = []

    # -- public -----------------------------------------------------------------------
    def add_error(self, error: LineError) -> None:
        self.line_errors.append(error)

    def add_timing(self, timing: ToolTiming) -> ToolRun | None:
        """Record when a tool really ran; returns the updated run when it is known."""
        position = self._runs_by_id.get(timing.tool_id)
        if position is None:
            self._early_timings[timing.tool_id] = timing
            return None
        return self._apply_timing(position, timing)

    def _apply_timing(self, position: int, timing: ToolTiming) -> ToolRun:
        run = self.tool_runs[position]
        run = replace(
            run,
            name=run.name or timing.name,
            started_at=timing.started_at if timing.started_at is not None else run.started_at,
            ended_at=timing.ended_at if timing.ended_at is not None else run.ended_at,
            is_error=run.is_error if timing.is_error is None else (run.is_error or timing.is_error),
        )
        if timing.result_text is not None and run.status == "pending":
            # The tool log holds the result even though no request carried it.
            run = replace(
                run, status="paired", result_text=timing.result_text[:RESULT_PREVIEW_CHARS]
            )
        self.tool_runs[position] = run
        return run

    def add(self, exchange: Exchange) -> Update:
        exchange, problems = bounded(exchange)
        self.line_errors.extend(problems)
        messages = exchange.messages
        loop, prefix_len = self._choose_loop(exchange)
        index = len(self.calls) + 1
        base_call: int | None = None
        extends = False
        rewritten = False
        if loop is None:
            loop = self._new_loop(messages, index, exchange)
        else:
            base_call = loop.last_call
            extends = prefix_len == len(loop.last_messages)
            rewritten = not extends
        appended_raw = tuple(messages[prefix_len:])
        appended = tuple(exchange.normalize(m) for m in appended_raw)
        response = exchange.response
        tool_call_ids = tuple(b.tool_id or "" for b in response.tool_uses) if response else ()
        call = Call(
            index=index,
            loop=loop.index,
            line=exchange.line,
            model=exchange.model,
            system=exchange.system,
            tools=tuple(exchange.tools),
            appended=appended,
            appended_raw=appended_raw,
            prefix_len=prefix_len,
            base_call=base_call,
            extends_previous=extends,
            history_rewritten=rewritten,
            response=response,
            response_raw=exchange.response_raw,
            stop_reason=exchange.stop_reason,
            usage=exchange.usage,
            started_at=exchange.started_at,
            ended_at=exchange.ended_at,
            status=exchange.status,
            http_status=exchange.http_status,
            error=exchange.error,
            request_recorded=exchange.request_recorded,
            message_count=len(messages),
            tool_call_ids=tool_call_ids,
            extra=mask_secrets(dict(exchange.extra)) if exchange.extra else exchange.extra,
            tokens_estimated=exchange.tokens_estimated,
        )
        self.calls.append(call)
        loop.calls.append(index)
        loop.last_messages = messages
        loop.last_call = index
        loop.last_status = exchange.status
        loop.model = loop.model or exchange.model
        changed = self._pair_requests(loop, call, appended)
        changed += self._record_calls(loop, call, response)
        return Update(call, tuple(self.tool_runs[i] for i in dict.fromkeys(changed)))

    def finish(self, lines_total: int, records_ingested: int) -> Trace:
        """Freeze the result; tool calls still waiting for a result become dangling.

        Tool executions logged for an id no model call asked for stay visible as orphans.
        """
        for timing in self._early_timings.values():
            self.tool_runs.append(
                ToolRun(
                    id=timing.tool_id,
                    name=timing.name,
                    loop=0,
                    call=None,
                    result_call=None,
                    status="orphan",
                    is_error=bool(timing.is_error),
                    batch_size=1,
                    started_at=timing.started_at,
                    ended_at=timing.ended_at,
                )
            )
        self._early_timings.clear()
        runs = tuple(
            replace(run, status="dangling") if run.status == "pending" else run
            for run in self.tool_runs
        )
        return self._trace(runs, lines_total, records_ingested)

    def snapshot(self, lines_total: int, records_ingested: int) -> Trace:
        """The trace so far, without finalising it, for a live tail's report.

        Unlike `finish`, tool calls still waiting for a result stay `pending` and tool
        timings logged before their call are not shown yet; the builder goes on taking
        exchanges. The result shares the builder's immutable calls and runs, so it stays
        valid (and safe to read from another thread) while more exchanges arrive.
        """
        return self._trace(tuple(self.tool_runs), lines_total, records_ingested)

    def _trace(self, runs: tuple[ToolRun, ...], lines_total: int, records_ingested: int) -> Trace:
        loops = tuple(
            Loop(
                index=state.index,
                calls=tuple(state.calls),
                model=state.model,
                key=state.key,
                label=state.label,
                parent_tool_id=state.parent_tool_id,
            )
            for state in self._loops
        )
        return Trace(
            format=self.format_name,
            calls=tuple(self.calls),
            tool_runs=runs,
            batches=tuple(self.batches),
            loops=loops,
            line_errors=tuple(sorted(self.line_errors, key=lambda e: e.line)),
            lines_total=lines_total,
            records_ingested=records_ingested,
            detection_reason=self.detection_reason,
            id_collisions=tuple(self.id_collisions),
        )

    # -- loop grouping ----------------------------------------------------------------
    def _choose_loop(self, exchange: Exchange) -> tuple[_LoopState | None, int]:
        """The loop this request continues, and how many leading messages it shares.

        A request continues a loop when the loop's latest request is a strict prefix of
        it; an identical request continues it only as a retry of a failed call. When no
        loop is a prefix but one starts with the same first message, the request
        rewrote that loop's history (compaction, edits).
        """
        messages = exchange.messages
        if exchange.loop_key is not None:
            keyed = self._loops_by_key.get(exchange.loop_key)
            if keyed is None:
                return None, 0
            return keyed, _common_prefix(messages, keyed.last_messages)
        if not messages:
            return None, 0
        candidates = self._loops_by_first.get(_key(messages[0]), [])
        best: _LoopState | None = None
        best_len = -1
        for loop in candidates:
            previous = loop.last_messages
            size = len(previous)
            if size > len(messages) or best_len >= size:
                continue
            if size == len(messages) and loop.last_status != "error":
                continue
            if _equal_prefix(messages, previous, size):
                best, best_len = loop, size
        if best is not None:
            return best, best_len
        for loop in reversed(candidates):
            shared = _common_prefix(messages, loop.last_messages)
            if best_len < shared < len(messages):
                best, best_len = loop, shared
        if best is None:
            return None, 0
        return best, best_len

    def _new_loop(self, messages: Sequence[Any], index: int, exchange: Exchange) -> _LoopState:
        first_key = _key(messages[0]) if messages else b""
        loop = _LoopState(
            index=len(self._loops) + 1,
            first_key=first_key,
            last_messages=messages,
            last_call=index,
            last_status=exchange.status,
            model=exchange.model,
            key=exchange.loop_key,
            label=exchange.loop_label,
            parent_tool_id=exchange.parent_tool_id,
        )
        self._loops.append(loop)
        if exchange.loop_key is not None:
            self._loops_by_key[exchange.loop_key] = loop
        elif messages:
            self._loops_by_first.setdefault(first_key, []).append(loop)
        return loop

    # -- tool pairing -----------------------------------------------------------------
    def _pair_requests(self, loop: _LoopState, call: Call, appended: tuple[Message, ...]):
        """Pair results in what this request appended with earlier calls, by id only."""
        changed: list[int] = []
        for message in appended:
            for block in message.blocks:
                if block.kind == "tool_use" and block.tool_id is not None:
                    known = block.tool_id in loop.runs_by_id or block.tool_id in self._runs_by_id
                    if not known:
                        changed.append(
                            self._new_run(loop, block.tool_id, block.name, None, 1, block.input)
                        )
                elif block.kind == "tool_result":
                    changed.append(self._attach_result(loop, call, block))
        return changed

    def _attach_result(self, loop: _LoopState, call: Call, block) -> int:
        tool_id = block.tool_id or ""
        position = loop.runs_by_id.get(tool_id)
        if position is None:
            # Another loop asked for it (a side conversation forked from this one, or a
            # request that re-carries history): the id is the same call.
            position = self._runs_by_id.get(tool_id)
        if position is not None:
            run = self.tool_runs[position]
            if run.result_call is None:
                self.tool_runs[position] = replace(
                    run,
                    result_call=call.index,
                    status="paired",
                    is_error=run.is_error or block.is_error,
                    result_text=block.text[:RESULT_PREVIEW_CHARS],
                )
            return position
        self.tool_runs.append(
            ToolRun(
                id=tool_id,
                name=None,
                loop=loop.index,
                call=None,
                result_call=call.index,
                status="orphan",
                is_error=block.is_error,
                batch_size=1,
                result_text=block.text[:RESULT_PREVIEW_CHARS],
            )
        )
        return len(self.tool_runs) - 1

    def _record_calls(self, loop: _LoopState, call: Call, response: Message | None) -> list[int]:
        """Tool calls the response asked for; several at once form a parallel batch."""
        if response is None:
            return []
        uses = response.tool_uses
        if len(uses) > 1:
            self.batches.append(ParallelBatch(call.index, tuple(b.tool_id or "" for b in uses)))
        return [
            self._new_run(loop, b.tool_id or "", b.name, call.index, len(uses), b.input)
            for b in uses
        ]

    def _new_run(
        self,
        loop: _LoopState,
        tool_id: str,
        name: str | None,
        call: int | None,
        batch_size: int,
        arguments: Any,
    ) -> int:
        self.tool_runs.append(
            ToolRun(
                id=tool_id,
                name=name,
                loop=loop.index,
                call=call,
                result_call=None,
                status="pending",
                is_error=False,
                batch_size=batch_size,
                input=arguments,
            )
        )
        position = len(self.tool_runs) - 1
        earlier = loop.runs_by_id.get(tool_id)
        if earlier is not None:
            # The same id for a second call: pair later results with the newest call.
            first = self.tool_runs[earlier].call
            self.id_collisions.append(IdCollision(tool_id, loop.index, first, call))
        loop.runs_by_id[tool_id] = position
        self._runs_by_id[tool_id] = position
        early = self._early_timings.pop(tool_id, None)
        if early is not None:
            self._apply_timing(position, early)
        return position


def _key(message: Any) -> bytes:
    try:
        return orjson.dumps(_without_cache_marks(message), option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return repr(message).encode()


def _same(mine: Any, theirs: Any) -> bool:
    """Equal messages, ignoring prompt-caching breakpoints.

    Clients move `cache_control` to the newest message on every call (Claude Code
    does), so an unchanged message can differ only by that marker.
    """
    return mine == theirs or _without_cache_marks(mine) == _without_cache_marks(theirs)


def _without_cache_marks(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    content = message.get("content")
    if "cache_control" not in message and not isinstance(content, list):
        return message
    stripped = {k: v for k, v in message.items() if k != "cache_control"}
    if isinstance(content, list):
        stripped["content"] = [
            {k: v for k, v in block.items() if k != "cache_control"}
            if isinstance(block, dict) and "cache_control" in block
            else block
            for block in content
        ]
    return stripped


def _equal_prefix(messages: Sequence[Any], previous: Sequence[Any], size: int) -> bool:
    # The plain comparison runs in C; cache markers are only looked at when it fails.
    if list(messages[:size]) == list(previous):
        return True
    return all(_same(messages[i], previous[i]) for i in range(size - 1, -1, -1))


def _common_prefix(messages: Sequence[Any], previous: Sequence[Any]) -> int:
    # Adapters whose requests are views of one growing transcript answer in O(1).
    shared = getattr(messages, "shared_prefix_length", None)
    known = shared(previous) if shared is not None else None
    if known is not None:
        return known
    size = min(len(messages), len(previous))
    if list(messages[:size]) == list(previous[:size]):  # C-level, identity shortcut
        return size
    shared = 0
    for mine, theirs in zip(messages, previous, strict=False):
        if not _same(mine, theirs):
            break
        shared += 1
    return shared
