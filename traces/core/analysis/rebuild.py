"""Rebuild loops from exchanges: each request placed in its loop, each tool call paired.

The builder is incremental (`add` one exchange at a time) so uploads, the CLI and live
tail share it. It keeps only each loop's latest request for prefix comparison; calls
store what their request appended, so memory grows with unique content.

One job a module: `loops` chooses the loop a request continues (`prefixes` compares
transcripts), `compaction` keeps a loop across a server-side compaction block, `pairing`
pairs tool calls with their results and timings, `mcp_traffic` places MCP `tools/call`
traffic on the run it executed. This module builds the `Call` and the final `Trace`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traces.core.records import replace

from ..model import (
    Call,
    Exchange,
    HttpTraffic,
    IdCollision,
    LineError,
    Loop,
    ParallelBatch,
    ToolRun,
    ToolTiming,
    Trace,
)
from ..reading.bounds import bounded
from ..reading.credentials import mask_secrets
from .compaction import Compactions
from .loops import LoopIndex
from .mcp_traffic import place_traffic
from .pairing import ToolRuns
from .prefixes import common_prefix


class TraceBuilder:
    """Accumulates exchanges into calls, loops, tool runs and batches."""

    def __init__(self, format_name: str, detection_reason: str = "") -> None:
        self.format_name = format_name
        self.detection_reason = detection_reason
        self.calls: list[Call] = []
        self.line_errors: list[LineError] = []
        self.other_traffic: list[HttpTraffic] = []
        self._loops = LoopIndex()
        self._runs = ToolRuns()
        self._compactions = Compactions()
        self._masked_texts: dict[str, str] = {}
        """`mask_secrets`'s memo for the calls' metadata (it repeats at every call)."""

    @property
    def tool_runs(self) -> list[ToolRun]:
        return self._runs.runs

    @property
    def batches(self) -> list[ParallelBatch]:
        return self._runs.batches

    @property
    def id_collisions(self) -> list[IdCollision]:
        return self._runs.id_collisions

    # -- public -----------------------------------------------------------------------
    def add_error(self, error: LineError) -> None:
        self.line_errors.append(error)

    def add_timing(self, timing: ToolTiming) -> ToolRun | None:
        """Record when a tool really ran; returns the updated run when it is known."""
        return self._runs.add_timing(timing)

    def add_traffic(self, traffic: HttpTraffic) -> ToolRun | None:
        """Keep a non-model HTTP interaction; an MCP `tools/call` is placed on the tool run
        that asked for it (see `mcp_traffic`). Returns the run it updated, if any."""
        self.other_traffic.append(traffic)
        return place_traffic(self._runs, traffic, len(self.other_traffic))

    def add(self, exchange: Exchange) -> Call:
        """Place one exchange: its call, in its loop, its tool calls paired."""
        exchange, problems = bounded(exchange)
        self.line_errors.extend(problems)
        messages = exchange.messages
        compaction = self._compactions.leading(exchange)
        loop, prefix_len = self._loops.choose(exchange)
        if loop is None and compaction is not None:
            loop = self._compactions.loop_of(compaction)
            prefix_len = 0 if loop is None else common_prefix(messages, loop.last_messages)
        index = len(self.calls) + 1
        base_call: int | None = None
        extends = False
        rewritten = False
        extra = exchange.extra
        if loop is None:
            loop = self._loops.new(messages, index, exchange)
        else:
            base_call = loop.last_call
            extends = prefix_len == len(loop.last_messages)
            rewritten = not extends
        appended_raw = tuple(messages[prefix_len:])
        normalize = exchange.normalize
        appended = tuple([normalize(m) for m in appended_raw])
        compacted = self._compactions.starts_from(loop, compaction, appended)
        if compacted and base_call is not None and "compaction" not in extra:
            extra = {**extra, "compaction": {"source": "compaction block"}}
        response = exchange.response
        tool_call_ids = tuple([b.tool_id or "" for b in response.tool_uses]) if response else ()
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
            extra=self._masked(extra) if extra else extra,
            tokens_estimated=exchange.tokens_estimated,
        )
        self.calls.append(call)
        loop.calls.append(index)
        loop.last_messages = messages
        loop.last_call = index
        loop.last_status = exchange.status
        loop.model = loop.model or exchange.model
        changed = self._runs.pair_requests(loop, call, appended)
        changed += self._runs.record_calls(loop, call, response)
        if exchange.tool_pairing:
            self._runs.mark_pairing(changed, exchange.tool_pairing)
        self._compactions.remember(response, loop)
        return call

    def _masked(self, extra: Mapping[str, Any]) -> dict[str, Any]:
        """The call's metadata with its credentials masked: a new dict (a dict is not
        copied first, `mask_secrets` builds one)."""
        masked: dict[str, Any] = mask_secrets(
            extra if isinstance(extra, dict) else dict(extra), memo=self._masked_texts
        )
        return masked

    def finish(self, lines_total: int, records_ingested: int) -> Trace:
        """Freeze the result; tool calls still waiting for a result become dangling.

        Tool executions logged for an id no model call asked for stay visible as orphans.
        """
        self._runs.close_timings()
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
            for state in self._loops.loops
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
