"""Group requests into loops: a request continues the loop whose latest request it extends.

A loop is one conversation with the model. Formats that name their conversations give a
loop key; for the others the transcript decides: a request continues a loop when the
loop's latest request is a strict prefix of it, and rewrote that loop's history when it
only shares the first message. `rebuild.TraceBuilder` asks this index for every request.

Sibling subagents given the same prompt open loops whose requests are equal until their
first answers differ, and their next requests may come in any order: a prefix shared by
several loops goes to the loop that asked the tool calls whose results the request
carries, and a request that names the tool call that spawned it (`parent_tool_id`) only
to a loop of that call. Otherwise the first sibling's loop took both next requests, and
each loop's calls looked dangling (issue 23).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from traces.core.records import dataclass, field

from ..model import Exchange
from .prefixes import common_prefix, equal_prefix, key


@dataclass(slots=True)
class LoopState:
    """One loop while it is being rebuilt: its latest request and what it paired."""

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


class LoopIndex:
    """Every loop so far, found by loop key or by first message."""

    def __init__(self) -> None:
        self.loops: list[LoopState] = []
        self._by_first: dict[bytes, list[LoopState]] = {}
        self._by_key: dict[str, LoopState] = {}

    def choose(self, exchange: Exchange) -> tuple[LoopState | None, int]:
        """The loop this request continues, and how many leading messages it shares.

        A request continues a loop when the loop's latest request is a strict prefix of
        it; an identical request continues it only as a retry of a failed call. When no
        loop is a prefix but one starts with the same first message, the request
        rewrote that loop's history (compaction, edits).
        """
        messages = exchange.messages
        if exchange.loop_key is not None:
            keyed = self._by_key.get(exchange.loop_key)
            if keyed is None:
                return None, 0
            return keyed, common_prefix(messages, keyed.last_messages)
        if not messages:
            return None, 0
        candidates = self._by_first.get(key(messages[0]), [])
        parent = exchange.parent_tool_id
        best: LoopState | None = None
        best_len = -1
        for loop in candidates:
            previous = loop.last_messages
            size = len(previous)
            if size > len(messages) or best_len > size:
                continue
            if size == len(messages) and loop.last_status != "error":
                continue
            if parent is not None and loop.parent_tool_id not in (None, parent):
                continue  # a sibling spawned by another tool call
            if (
                best is not None
                and best_len == size
                and (_answers(best, exchange, size) or not _answers(loop, exchange, size))
            ):
                continue  # a tie: the first such loop, unless only this one asked the results
            if equal_prefix(messages, previous, size):
                best, best_len = loop, size
        if best is not None:
            return best, best_len
        for loop in reversed(candidates):
            shared = common_prefix(messages, loop.last_messages)
            if best_len < shared < len(messages):
                best, best_len = loop, shared
        if best is None:
            return None, 0
        return best, best_len

    def new(self, messages: Sequence[Any], index: int, exchange: Exchange) -> LoopState:
        """Open a loop whose first call is call `index`."""
        first_key = key(messages[0]) if messages else b""
        loop = LoopState(
            index=len(self.loops) + 1,
            first_key=first_key,
            last_messages=messages,
            last_call=index,
            last_status=exchange.status,
            model=exchange.model,
            key=exchange.loop_key,
            label=exchange.loop_label,
            parent_tool_id=exchange.parent_tool_id,
        )
        self.loops.append(loop)
        if exchange.loop_key is not None:
            self._by_key[exchange.loop_key] = loop
        elif messages:
            self._by_first.setdefault(first_key, []).append(loop)
        return loop


def _answers(loop: LoopState, exchange: Exchange, size: int) -> bool:
    """Whether the request's messages after the first `size` carry the result of a tool
    call `loop` asked (only read for loops tied on their shared prefix)."""
    for raw in exchange.messages[size:]:
        for block in exchange.normalize(raw).tool_results:
            if block.tool_id is not None and block.tool_id in loop.runs_by_id:
                return True
    return False
