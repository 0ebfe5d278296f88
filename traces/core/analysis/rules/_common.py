"""Views of a trace that several loop rules share (not a rule: the registry skips `_*`).

Results are read from the requests' own tool_result blocks, not from `ToolRun.result_text`
(which keeps only a preview), so size- and shape-based rules see the whole text.
Every view is computed once per `LintContext` and kept in a weak cache.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

import orjson

from traces.core.records import dataclass

from ...model import Block, Call, Message, ToolRun
from .base import LintContext

QUOTE_CHARS = 80
"""Longest quote of trace text a finding's message may carry."""

_View = TypeVar("_View")
_CACHE: WeakKeyDictionary[LintContext, dict[str, Any]] = WeakKeyDictionary()
_SPACES = re.compile(r"\s+")


def cached_view(ctx: LintContext, name: str, build: Callable[[LintContext], _View]) -> _View:
    """`build(ctx)` computed once per context (rules run one after another on one ctx)."""
    views = _CACHE.setdefault(ctx, {})
    if name not in views:
        views[name] = build(ctx)
    view: _View = views[name]
    return view


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """Trace text fit for a one-line message: whitespace collapsed, cut with an ellipsis."""
    flat = _SPACES.sub(" ", text).strip()
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """`shorten`ed text in single quotes."""
    return f"'{shorten(text, limit)}'"


def name_of(run: ToolRun | None) -> str:
    """The tool's name for messages ('?' when no call named it: an orphan result)."""
    return run.name if run is not None and run.name else "?"


def canonical(value: Any) -> bytes:
    """Arguments as canonical JSON (sorted keys), so equal arguments compare equal."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return repr(value).encode()


def id_list(ids: list[str], limit: int = 4) -> str:
    """A short comma list of tool call ids ('a, b, c and 3 more')."""
    shown = ", ".join(ids[:limit])
    return shown if len(ids) <= limit else f"{shown} and {len(ids) - limit} more"


@dataclass(frozen=True, slots=True)
class SentResult:
    """A tool result the first time a request carried it."""

    call: Call
    """The request that carried it."""
    message_position: int
    """Index of its message in that request's transcript."""
    block_position: int
    """Index of the block within that message."""
    block: Block
    run: ToolRun
    """The tool run this result answered (an orphan run when it answered none)."""


def sent_results(ctx: LintContext) -> list[SentResult]:
    """Every tool result the first time a request carried it (once per tool run), in call
    order; a reused id's second result is its own run and is included."""
    return cached_view(ctx, "sent_results", _build_sent_results)


def _build_sent_results(ctx: LintContext) -> list[SentResult]:
    runs: dict[tuple[str, int], tuple[int, ToolRun]] = {}
    for position, run in enumerate(ctx.trace.tool_runs):
        if run.result_call is not None:
            runs.setdefault((run.id, run.result_call), (position, run))
    seen_runs: set[int] = set()
    seen_orphans: set[tuple[int, str]] = set()
    found: list[SentResult] = []
    for call in ctx.trace.calls:
        for offset, message in enumerate(call.appended):
            for block_position, block in enumerate(message.blocks):
                if block.kind != "tool_result":
                    continue
                tool_id = block.tool_id or ""
                match = runs.get((tool_id, call.index))
                if match is None or match[0] in seen_runs:
                    continue  # re-sent (after a history rewrite, or twice in one request)
                position, run = match
                if run.status == "orphan":
                    if (call.loop, tool_id) in seen_orphans:
                        continue  # each re-send of an orphan makes a new run
                    seen_orphans.add((call.loop, tool_id))
                seen_runs.add(position)
                found.append(SentResult(call, call.prefix_len + offset, block_position, block, run))
    return found


def asked_runs(ctx: LintContext) -> dict[int, list[ToolRun]]:
    """Tool runs each call's response asked for, by call index, in response order."""
    return cached_view(ctx, "asked_runs", _build_asked_runs)


def _build_asked_runs(ctx: LintContext) -> dict[int, list[ToolRun]]:
    asked: dict[int, list[ToolRun]] = {}
    for run in ctx.trace.tool_runs:
        if run.call is not None:
            asked.setdefault(run.call, []).append(run)
    return asked


def tool_uses(call: Call) -> tuple[Block, ...]:
    """The tool_use blocks of a call's response."""
    return call.response.tool_uses if call.response is not None else ()


def is_json_document(text: str) -> bool:
    """True when the text is one JSON object or array (what a structured tool returns)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return False
    try:
        return isinstance(orjson.loads(stripped), dict | list)
    except orjson.JSONDecodeError:
        return False


ONE_RESULT_ROLES = {"tool", "function"}
"""Roles whose messages carry one result each by protocol (OpenAI Chat, Responses items):
a run of them is one turn. Results in `user` messages (Anthropic) share one message."""


@dataclass(frozen=True, slots=True)
class BatchResults:
    """Where the results of one parallel batch were sent."""

    batch_call: int
    asked: tuple[str, ...]
    """The batch's tool call ids, in the order the response asked them."""
    sent: tuple[SentResult, ...]
    """Results found, in the order they were sent (request, message, block)."""
    turns: tuple[int, ...]
    """The result turn (0, 1, ...) each of `sent` came back in; one turn is one message,
    or one run of `tool` messages, of one request."""

    @property
    def groups(self) -> int:
        """Separate result turns (1 when all results came back together)."""
        return self.turns[-1] + 1

    @property
    def requests(self) -> list[int]:
        return sorted({sent.call.index for sent in self.sent})


def batch_results(ctx: LintContext) -> list[BatchResults]:
    """The results of every parallel batch with at least two results sent."""
    return cached_view(ctx, "batch_results", _build_batch_results)


def _build_batch_results(ctx: LintContext) -> list[BatchResults]:
    by_run = {
        (sent.run.id, sent.run.call): sent
        for sent in sent_results(ctx)
        if sent.run.call is not None
    }
    found = []
    for batch in ctx.trace.batches:
        sent = [by_run[(i, batch.call)] for i in batch.tool_call_ids if (i, batch.call) in by_run]
        if len(sent) < 2:
            continue
        sent.sort(key=lambda s: (s.call.index, s.message_position, s.block_position))
        turns = _result_turns(ctx, sent)
        found.append(BatchResults(batch.call, batch.tool_call_ids, tuple(sent), turns))
    return found


def _result_turns(ctx: LintContext, sent: list[SentResult]) -> tuple[int, ...]:
    """The turn of each result (sorted as sent); separate requests are separate turns."""
    ids = {s.block.tool_id for s in sent}
    turn_of_message: dict[tuple[int, int], int] = {}
    turn = -1
    for index in sorted({s.call.index for s in sent}):
        call = ctx.call(index)
        positions = [s.message_position for s in sent if s.call.index == index]
        interrupted = True
        for position in range(min(positions), max(positions) + 1):
            message = call.appended[position - call.prefix_len]
            carries = any(b.kind == "tool_result" and b.tool_id in ids for b in message.blocks)
            if carries:
                if interrupted or message.role not in ONE_RESULT_ROLES:
                    turn += 1
                interrupted = False
                turn_of_message[(index, position)] = turn
            elif not _echo_of(message, ids):
                interrupted = True
    return tuple(turn_of_message[(s.call.index, s.message_position)] for s in sent)


def _echo_of(message: Message, ids: set[str | None]) -> bool:
    """A message holding only the batch's own calls (or reasoning), as item lists do."""
    return all(
        (block.kind == "tool_use" and block.tool_id in ids)
        or block.kind in ("thinking", "redacted_thinking")
        for block in message.blocks
    )
