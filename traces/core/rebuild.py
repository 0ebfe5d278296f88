"""Rebuild loops from exchanges: group calls by transcript prefix, pair tool calls by id.

The builder is incremental (`add` one exchange at a time) so uploads, the CLI and live
tail share it. It keeps only each loop's latest request for prefix comparison; calls
store what their request appended, so memory grows with unique content.

What real loops do, handled here for every format: a server-side compaction block keeps
its loop and marks the call that starts from it; ids a provider restarts per response
pair with the newest call of that id, and an echo whose ids the client re-keyed pairs
with the call it echoes; results that read as failures without a flag are marked as
inferred errors (`inferred_errors`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from .bounds import bounded
from .credentials import mask_secrets
from .inferred_errors import inferred_error
from .model import (
    Block,
    Call,
    Exchange,
    HttpTraffic,
    IdCollision,
    LineError,
    Loop,
    Message,
    Pairing,
    ParallelBatch,
    ToolRun,
    ToolTiming,
    Trace,
)

RESULT_TEXT_CHARS = 4000
"""How much of a tool result a ToolRun keeps (its stored text; the report previews less)."""
COMPACTION_LOOKAHEAD = 3
"""Messages at the start of a request searched for a compaction block."""


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
    compactions: set[bytes] = field(default_factory=set)
    """Server-side compaction blocks this loop's requests already started from."""


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
        self.other_traffic: list[HttpTraffic] = []
        self._asked: dict[int, list[int]] = {}
        """Tool runs each call's response asked for, by call index."""
        self._rekeyed_runs: set[int] = set()
        self._loops_by_compaction: dict[bytes, _LoopState] = {}
        """Compaction blocks a response returned, to the loop whose next request starts
        from one (the messages before it dropped, so the first message differs)."""

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
            input=run.input if run.input is not None else timing.input,
            started_at=timing.started_at if timing.started_at is not None else run.started_at,
            ended_at=timing.ended_at if timing.ended_at is not None else run.ended_at,
            is_error=run.is_error if timing.is_error is None else (run.is_error or timing.is_error),
        )
        if timing.result_text is not None and run.status == "pending":
            # The tool log holds the result even though no request carried it.
            run = replace(
                run,
                status="paired",
                result_text=timing.result_text[:RESULT_TEXT_CHARS],
                pairing=timing.pairing,
            )
        self.tool_runs[position] = _with_inference(run)
        return self.tool_runs[position]

    def add_traffic(self, traffic: HttpTraffic) -> ToolRun | None:
        """Keep a non-model HTTP interaction; an MCP `tools/call` is placed on the tool run
        that asked for it (the latest run of that tool, by name and arguments, with no
        execution yet), which it marks as run over MCP, with its `isError`.

        Returns the run it updated, if any.
        """
        self.other_traffic.append(traffic)
        if traffic.tool_name is None:
            return None
        position = self._run_for(traffic)
        if position is None:
            return None
        run = self.tool_runs[position]
        transport = {
            "kind": traffic.kind,
            "traffic": len(self.other_traffic),
            "line": traffic.line,
            "session": traffic.session,
            "rpc_id": traffic.rpc_id,
            "is_error": bool(traffic.is_error),
        }
        run = replace(run, transport=transport, is_error=run.is_error or bool(traffic.is_error))
        if run.status == "pending" and traffic.result_text is not None:
            # The server's answer is the result, even if no later request carries it.
            run = replace(run, status="paired", result_text=traffic.result_text[:RESULT_TEXT_CHARS])
        self.tool_runs[position] = run
        return run

    def _run_for(self, traffic: HttpTraffic) -> int | None:
        """The most recent model-issued run of this tool not yet matched to an execution:
        one with the arguments sent, else one still waiting for its result."""
        fallback: int | None = None
        for position in range(len(self.tool_runs) - 1, max(-1, len(self.tool_runs) - 500), -1):
            run = self.tool_runs[position]
            if run.name != traffic.tool_name or run.call is None or run.transport is not None:
                continue
            if run.status not in ("pending", "paired"):
                continue
            if run.input == traffic.tool_input:
                return position
            if fallback is None and run.status == "pending":
                fallback = position  # arguments re-encoded by the client: still waiting
        return fallback

    def add(self, exchange: Exchange) -> Update:
        exchange, problems = bounded(exchange)
        self.line_errors.extend(problems)
        messages = exchange.messages
        compaction = self._compaction_in(exchange)
        loop, prefix_len = self._choose_loop(exchange)
        if loop is None and compaction is not None:
            loop = self._loops_by_compaction.get(compaction)
            prefix_len = 0 if loop is None else _common_prefix(messages, loop.last_messages)
        index = len(self.calls) + 1
        base_call: int | None = None
        extends = False
        rewritten = False
        extra = exchange.extra
        if loop is None:
            loop = self._new_loop(messages, index, exchange)
        else:
            base_call = loop.last_call
            extends = prefix_len == len(loop.last_messages)
            rewritten = not extends
        appended_raw = tuple(messages[prefix_len:])
        appended = tuple(exchange.normalize(m) for m in appended_raw)
        compacted = self._starts_from_compaction(loop, compaction, appended)
        if compacted and base_call is not None and "compaction" not in extra:
            extra = {**extra, "compaction": {"source": "compaction block"}}
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
            extra=mask_secrets(dict(extra)) if extra else extra,
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
        if exchange.tool_pairing:
            self._mark_pairing(changed, exchange.tool_pairing)
        for block in response.blocks if response is not None else ():
            if _is_compaction(block):
                self._loops_by_compaction[_key(block.raw)] = loop
        return Update(call, tuple(self.tool_runs[i] for i in dict.fromkeys(changed)))

    def _starts_from_compaction(
        self, loop: _LoopState, leading: bytes | None, appended: tuple[Message, ...]
    ) -> bool:
        """Whether this request is the loop's first from a compaction block it had not
        started from yet (at its head, or appended by a client that keeps all history)."""
        found = leading
        if self._loops_by_compaction:
            carried = [_key(b.raw) for m in appended for b in m.blocks if _is_compaction(b)]
            found = carried[-1] if carried else leading
        if found is None or found in loop.compactions:
            return False
        loop.compactions.add(found)
        return True

    def _compaction_in(self, exchange: Exchange) -> bytes | None:
        """The server-side compaction block this request starts from, if any.

        After an Anthropic `compaction` block (or a Responses `compaction` item) the API
        ignores what came before it, and clients drop it: the block is among the first
        messages. Only those are looked at, so long loops stay linear.
        """
        if not self._loops_by_compaction:
            return None
        found = None
        for raw in list(exchange.messages[:COMPACTION_LOOKAHEAD]):
            for block in exchange.normalize(raw).blocks:
                if _is_compaction(block):
                    found = _key(block.raw)
        return found

    def finish(self, lines_total: int, records_ingested: int) -> Trace:
        """Freeze the result; tool calls still waiting for a result become dangling.

        Tool executions logged for an id no model call asked for stay visible as orphans.
        """
        for timing in self._early_timings.values():
            # A log that records the call with its result (an OTel tool span) is a whole
            # tool run, though no model call in the file asked for it.
            whole = timing.result_text is not None and timing.name is not None
            self.tool_runs.append(
                _with_inference(
                    ToolRun(
                        id=timing.tool_id,
                        name=timing.name,
                        loop=0,
                        call=None,
                        result_call=None,
                        status="paired" if whole else "orphan",
                        is_error=bool(timing.is_error),
                        batch_size=1,
                        input=timing.input,
                        result_text=(timing.result_text or "")[:RESULT_TEXT_CHARS],
                        started_at=timing.started_at,
                        ended_at=timing.ended_at,
                    )
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
            other_traffic=tuple(self.other_traffic),
        )

    def _mark_pairing(self, positions: list[int], pairing: Pairing | Mapping[str, Pairing]) -> None:
        """Runs whose ids the adapter made up say how their result was matched (one method
        for the exchange, or one per made-up id)."""
        for position in positions:
            run = self.tool_runs[position]
            method = pairing if isinstance(pairing, str) else pairing.get(run.id)
            if method is not None and run.pairing != method:
                self.tool_runs[position] = replace(run, pairing=method)

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
    def _pair_requests(
        self, loop: _LoopState, call: Call, appended: tuple[Message, ...]
    ) -> list[int]:
        """Pair results in what this request appended with earlier calls, by id only."""
        changed: list[int] = []
        for message in appended:
            for block in message.blocks:
                if block.kind == "tool_use" and block.tool_id is not None:
                    known = block.tool_id in loop.runs_by_id or block.tool_id in self._runs_by_id
                    if known:
                        continue
                    rekeyed = self._rekeyed(loop, call, block)
                    if rekeyed is not None:
                        changed.append(rekeyed)
                    else:
                        changed.append(
                            self._new_run(loop, block.tool_id, block.name, None, 1, block.input)
                        )
                elif block.kind == "tool_result":
                    changed.append(self._attach_result(loop, call, block))
        return changed

    def _rekeyed(self, loop: _LoopState, call: Call, block: Any) -> int | None:
        """The previous response's call that this echoed tool_use re-keys, if any.

        Providers that number calls per response (`call_0`, `call_1` …) leave clients to
        make the ids unique, so the echo of a response carries new ids: an echoed call
        with an unknown id, the same tool and the same arguments as a still-unanswered
        call of the previous response is that call, and its result pairs with it.
        """
        if call.base_call is None:
            return None
        wanted = _key(block.input)
        for position in self._asked.get(call.base_call, ()):
            run = self.tool_runs[position]
            if run.status != "pending" or position in self._rekeyed_runs:
                continue
            if run.name == block.name and _key(run.input) == wanted:
                self._rekeyed_runs.add(position)
                loop.runs_by_id[block.tool_id] = position
                self._runs_by_id[block.tool_id] = position
                return position
        return None

    def _attach_result(self, loop: _LoopState, call: Call, block: Block) -> int:
        tool_id = block.tool_id or ""
        position = loop.runs_by_id.get(tool_id)
        if position is None:
            # Another loop asked for it (a side conversation forked from this one, or a
            # request that re-carries history): the id is the same call.
            position = self._runs_by_id.get(tool_id)
        if position is not None:
            run = self.tool_runs[position]
            if run.result_call is None:
                self.tool_runs[position] = _with_inference(
                    replace(
                        run,
                        result_call=call.index,
                        status="paired",
                        is_error=run.is_error or block.is_error,
                        result_text=block.text[:RESULT_TEXT_CHARS],
                        pairing="id",  # a request carried the result under the call's id
                    )
                )
            return position
        self.tool_runs.append(
            _with_inference(
                ToolRun(
                    id=tool_id,
                    name=None,
                    loop=loop.index,
                    call=None,
                    result_call=call.index,
                    status="orphan",
                    is_error=block.is_error,
                    batch_size=1,
                    result_text=block.text[:RESULT_TEXT_CHARS],
                )
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
        asked = [
            self._new_run(loop, b.tool_id or "", b.name, call.index, len(uses), b.input)
            for b in uses
        ]
        if asked:
            self._asked[call.index] = asked
        return asked

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
        if earlier is not None and earlier not in self._rekeyed_runs:
            # (A call the client re-keyed is paired by its new id: nothing is ambiguous.)
            # The same id for a second call: pair later results with the newest call.
            first = self.tool_runs[earlier].call
            self.id_collisions.append(IdCollision(tool_id, loop.index, first, call))
        loop.runs_by_id[tool_id] = position
        self._runs_by_id[tool_id] = position
        early = self._early_timings.pop(tool_id, None)
        if early is not None:
            self._apply_timing(position, early)
        return position


def _is_compaction(block: Any) -> bool:
    raw = block.raw
    return block.kind == "other" and isinstance(raw, dict) and raw.get("type") == "compaction"


def _with_inference(run: ToolRun) -> ToolRun:
    """Mark a result that reads as a failure nothing flagged; a flag clears the guess."""
    answered = run.status in ("paired", "orphan")
    reason = inferred_error(run.result_text) if answered and not run.is_error else None
    return run if reason == run.error_inferred else replace(run, error_inferred=reason)


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
    return bool(mine == theirs or _without_cache_marks(mine) == _without_cache_marks(theirs))


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
    known: int | None = shared(previous) if shared is not None else None
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
