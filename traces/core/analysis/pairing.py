"""Pair tool calls with their results by id: the tool runs of a trace, as they are rebuilt.

A response asks for tool calls (each a pending run); a later request carries their
results under the same ids. What real loops do, handled here for every format: several
calls in one response form a parallel batch; an id used twice pairs with the newest call
of that id (an `IdCollision`); an echo whose ids the client re-keyed pairs with the call
it echoes; a tool log's timing (`ToolTiming`) is applied to the run of its id, kept until
that id appears; results that read as failures without a flag are marked as inferred
errors (`inferred_errors`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traces.core.records import replace

from ..model import Block, Call, IdCollision, Message, Pairing, ParallelBatch, ToolRun, ToolTiming
from .inferred_errors import inferred_error
from .loops import LoopState
from .prefixes import key

RESULT_TEXT_CHARS = 4000
"""How much of a tool result a ToolRun keeps (its stored text; the report previews less)."""


class ToolRuns:
    """Every tool run so far, in the order they were asked for (or found)."""

    def __init__(self) -> None:
        self.runs: list[ToolRun] = []
        self.batches: list[ParallelBatch] = []
        self.id_collisions: list[IdCollision] = []
        self.by_id: dict[str, int] = {}
        self.early_timings: dict[str, ToolTiming] = {}
        """Timings logged for an id no call has asked for yet."""
        self._asked: dict[int, list[int]] = {}
        """Tool runs each call's response asked for, by call index."""
        self._rekeyed: set[int] = set()
        self._last_read: tuple[str | None, str | None] = (None, None)
        """The last result text read for an inferred error, and what it read as: a result
        is read when its timing pairs it and again when a request carries it."""

    # -- timings ----------------------------------------------------------------------
    def add_timing(self, timing: ToolTiming) -> ToolRun | None:
        """Record when a tool really ran; returns the updated run when it is known."""
        position = self.by_id.get(timing.tool_id)
        if position is None:
            self.early_timings[timing.tool_id] = timing
            return None
        return self._apply_timing(position, timing)

    def _apply_timing(self, position: int, timing: ToolTiming) -> ToolRun:
        run = self.runs[position]
        current = {
            "name": run.name,
            "input": run.input,
            "started_at": run.started_at,
            "ended_at": run.ended_at,
            "is_error": run.is_error,
            "status": run.status,
            "result_text": run.result_text,
        }
        # One copy of the run, not one per kind of change (a Claude Code session times
        # every tool call it pairs: two copies at each were a tenth of pairing).
        self.runs[position] = replace(run, **self._timed(current, timing))
        return self.runs[position]

    def _timed(self, current: dict[str, Any], timing: ToolTiming) -> dict[str, Any]:
        """What a timing changes in a run whose fields `current` holds (those read here),
        its inferred error read again."""
        changes: dict[str, Any] = {
            "name": current["name"] or timing.name,
            "input": current["input"] if current["input"] is not None else timing.input,
            "started_at": (
                timing.started_at if timing.started_at is not None else current["started_at"]
            ),
            "ended_at": timing.ended_at if timing.ended_at is not None else current["ended_at"],
            "is_error": (
                current["is_error"]
                if timing.is_error is None
                else (current["is_error"] or timing.is_error)
            ),
        }
        status, text = current["status"], current["result_text"]
        if timing.result_text is not None and status == "pending":
            # The tool log holds the result even though no request carried it.
            status = changes["status"] = "paired"
            text = changes["result_text"] = timing.result_text[:RESULT_TEXT_CHARS]
            changes["pairing"] = timing.pairing
        changes["error_inferred"] = self._inferred(status, changes["is_error"], text)
        return changes

    def _inferred(self, status: str, is_error: bool, text: str) -> str | None:
        """`with_inference`'s reason for a run in this state, the same text read once."""
        if is_error or status not in ANSWERED:
            return None
        last_text, last_reason = self._last_read
        if text is last_text or text == last_text:
            return last_reason
        reason = inferred_error(text)
        self._last_read = (text, reason)
        return reason

    def close_timings(self) -> None:
        """Tool executions logged for an id no model call asked for stay visible as orphans."""
        for timing in self.early_timings.values():
            # A log that records the call with its result (an OTel tool span) is a whole
            # tool run, though no model call in the file asked for it.
            whole = timing.result_text is not None and timing.name is not None
            self.runs.append(
                with_inference(
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
        self.early_timings.clear()

    # -- pairing ----------------------------------------------------------------------
    def pair_requests(
        self, loop: LoopState, call: Call, appended: tuple[Message, ...]
    ) -> list[int]:
        """Pair results in what this request appended with earlier calls, by id only."""
        changed: list[int] = []
        for message in appended:
            for block in message.blocks:
                if block.kind == "tool_use" and block.tool_id is not None:
                    known = block.tool_id in loop.runs_by_id or block.tool_id in self.by_id
                    if known:
                        continue
                    rekeyed = self._rekeyed_run(loop, call, block)
                    if rekeyed is not None:
                        changed.append(rekeyed)
                    else:
                        changed.append(
                            self._new_run(loop, block.tool_id, block.name, None, 1, block.input)
                        )
                elif block.kind == "tool_result":
                    changed.append(self._attach_result(loop, call, block))
        return changed

    def _rekeyed_run(self, loop: LoopState, call: Call, block: Block) -> int | None:
        """The previous response's call that this echoed tool_use re-keys, if any.

        Providers that number calls per response (`call_0`, `call_1` …) leave clients to
        make the ids unique, so the echo of a response carries new ids: an echoed call
        with an unknown id, the same tool and the same arguments as a still-unanswered
        call of the previous response is that call, and its result pairs with it.
        """
        if call.base_call is None or block.tool_id is None:
            return None
        wanted = key(block.input)
        for position in self._asked.get(call.base_call, ()):
            run = self.runs[position]
            if run.status != "pending" or position in self._rekeyed:
                continue
            if run.name == block.name and key(run.input) == wanted:
                self._rekeyed.add(position)
                loop.runs_by_id[block.tool_id] = position
                self.by_id[block.tool_id] = position
                return position
        return None

    def _attach_result(self, loop: LoopState, call: Call, block: Block) -> int:
        tool_id = block.tool_id or ""
        position = loop.runs_by_id.get(tool_id)
        if position is None:
            # Another loop asked for it (a side conversation forked from this one, or a
            # request that re-carries history): the id is the same call.
            position = self.by_id.get(tool_id)
        if position is not None:
            run = self.runs[position]
            if run.result_call is None:
                is_error = run.is_error or block.is_error
                text = block.text[:RESULT_TEXT_CHARS]
                self.runs[position] = replace(
                    run,
                    result_call=call.index,
                    status="paired",
                    is_error=is_error,
                    result_text=text,
                    pairing="id",  # a request carried the result under the call's id
                    error_inferred=self._inferred("paired", is_error, text),
                )
            return position
        self.runs.append(
            with_inference(
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
        return len(self.runs) - 1

    def record_calls(self, loop: LoopState, call: Call, response: Message | None) -> list[int]:
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
        loop: LoopState,
        tool_id: str,
        name: str | None,
        call: int | None,
        batch_size: int,
        arguments: Any,
    ) -> int:
        fields: dict[str, Any] = {
            "id": tool_id,
            "name": name,
            "loop": loop.index,
            "call": call,
            "result_call": None,
            "status": "pending",
            "is_error": False,
            "batch_size": batch_size,
            "input": arguments,
            "started_at": None,
            "ended_at": None,
            "result_text": "",
        }
        early = self.early_timings.pop(tool_id, None)
        if early is not None:  # logged before its call (Claude Code times each tool so)
            fields.update(self._timed(fields, early))
        self.runs.append(ToolRun(**fields))  # made once, with its timing
        position = len(self.runs) - 1
        earlier = loop.runs_by_id.get(tool_id)
        if earlier is not None and earlier not in self._rekeyed:
            # (A call the client re-keyed is paired by its new id: nothing is ambiguous.)
            # The same id for a second call: pair later results with the newest call.
            first = self.runs[earlier].call
            self.id_collisions.append(IdCollision(tool_id, loop.index, first, call))
        loop.runs_by_id[tool_id] = position
        self.by_id[tool_id] = position
        return position

    def mark_pairing(self, positions: list[int], pairing: Pairing | Mapping[str, Pairing]) -> None:
        """Runs whose ids the adapter made up say how their result was matched (one method
        for the exchange, or one per made-up id)."""
        for position in positions:
            run = self.runs[position]
            method = pairing if isinstance(pairing, str) else pairing.get(run.id)
            if method is not None and run.pairing != method:
                self.runs[position] = replace(run, pairing=method)


ANSWERED = ("paired", "orphan")
"""Statuses of runs whose result text may read as an inferred error."""


def with_inference(run: ToolRun) -> ToolRun:
    """Mark a result that reads as a failure nothing flagged; a flag clears the guess."""
    answered = run.status in ANSWERED
    reason = inferred_error(run.result_text) if answered and not run.is_error else None
    return run if reason == run.error_inferred else replace(run, error_inferred=reason)
