"""Rule prefix-changed."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import orjson

from ...model import Call
from ._common import shorten
from .base import Finding, LintContext, Rule
from .registry import register

NAMES_SHOWN = 5


@register
class PrefixChanged(Rule):
    """The system prompt or tool definitions changed between calls of one loop.

    What it finds
    Two consecutive calls of a loop whose system prompt, or tool definitions, differ
    byte-wise (compared as serialised JSON, key order included). For tools the message
    names the tools added, removed or changed, or says that only their order changed.
    Changes that only move `cache_control` markers are reported too (a byte change is a
    byte change) but say "only cache_control markers moved", since clients such as
    Claude Code move them on purpose. Calls whose request was not recorded are skipped.

    Why it matters
    Prompt caching matches the request's prefix byte for byte, and tools and system come
    first: one changed byte there re-bills the whole prefix at the full (or cache-write)
    price on this call and invalidates what the previous calls cached.

    Example
    The system prompt embeds the current time ("It is 14:03:27"), so every call writes a
    new cache entry for 6,000 tokens of instructions and tools it never reads back.

    How to fix
    Keep the system prompt and tool list byte-stable within a loop: move volatile parts
    (time, counters, per-turn state) into the latest user message, and serialise tools
    in a fixed order.
    """

    id = "prefix-changed"
    severity = "warning"
    message = (
        "call {call} changed the {what} sent in call {previous}{detail}; prompt caching"
        " misses from there, keep the prefix byte-stable"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for calls in ctx.loop_calls.values():
            recorded = [call for call in calls if call.request_recorded]
            for previous, call in pairwise(recorded):
                yield from self._compare(previous, call)

    def _compare(self, previous: Call, call: Call) -> Iterator[Finding]:
        if previous.system is not call.system and _bytes(previous.system) != _bytes(call.system):
            detail = ""
            if _bytes(_unmarked(previous.system)) == _bytes(_unmarked(call.system)):
                detail = ": only cache_control markers moved"
            yield self.finding(call, what="system prompt", previous=previous.index, detail=detail)
        if previous.tools is call.tools:
            return
        before, after = list(previous.tools), list(call.tools)
        if _bytes(before) != _bytes(after):
            detail = _tools_detail(before, after)
            yield self.finding(
                call, what="tool definitions", previous=previous.index, detail=detail
            )


def _bytes(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return repr(value).encode()


def _unmarked(value: Any) -> Any:
    """The value without `cache_control` keys anywhere (for the markers-only check)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list | tuple):
        return [_unmarked(v) for v in value]
    return value


def _tool_name(tool: Any, position: int) -> str:
    if isinstance(tool, dict):
        name = tool.get("name")
        if name is None and isinstance(tool.get("function"), dict):
            name = tool["function"].get("name")
        if isinstance(name, str):
            return name
        kind = tool.get("type")
        if isinstance(kind, str):
            return kind
    return f"#{position + 1}"


def _tools_detail(before: list[Any], after: list[Any]) -> str:
    """Which tools were added, removed or changed (or that only markers or order moved)."""
    if _bytes(_unmarked(before)) == _bytes(_unmarked(after)):
        return ": only cache_control markers moved"
    old = {_tool_name(t, i): _bytes(_unmarked(t)) for i, t in enumerate(before)}
    new = {_tool_name(t, i): _bytes(_unmarked(t)) for i, t in enumerate(after)}
    parts = []
    for label, names in (
        ("added", sorted(new.keys() - old.keys())),
        ("removed", sorted(old.keys() - new.keys())),
        ("changed", sorted(n for n in old.keys() & new.keys() if old[n] != new[n])),
    ):
        if names:
            shown = ", ".join(shorten(n, 40) for n in names[:NAMES_SHOWN])
            more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
            parts.append(f"{label} {shown}{more}")
    if not parts:
        return ": same tools in a different order" if old == new else ""
    return ": " + "; ".join(parts)
