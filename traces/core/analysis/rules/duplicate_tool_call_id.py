"""Rule duplicate-tool-call-id."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ...model import IdCollision
from .base import Finding, LintContext, Rule
from .registry import register


@register
class DuplicateToolCallId(Rule):
    """One tool call id used for two different calls.

    What it finds
    A tool call id that a loop already used for an earlier call (the rebuilt trace's id
    collisions), or two `tool_use` blocks with the same id in one response. An id reused
    by many calls (a provider restarting at `call_0` in every response) is reported once,
    at its first reuse, with the number of later calls.

    Why it matters
    Results are paired with calls by id. With two calls behind one id, a result answers
    both or neither: clients and the API pair it with the wrong call, and the model reads
    one tool's output as another's.

    Example
    A benchmark harness reuses `call_HGn16KZh9oNCruxsMJ4gYXan` for both
    `search_direct_flight` and, three turns later, `search_onestop_flight`.

    How to fix
    Keep the ids the model generated; when you mint ids yourself (replays, synthetic
    transcripts), make them unique per call, e.g. a counter or a UUID.
    """

    id = "duplicate-tool-call-id"
    severity = "error"
    message = "tool call id {tool_call_id!r} {what}; give every call its own id"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for call in ctx.trace.calls:
            ids = call.tool_call_ids
            if len(ids) < 2 or len(set(ids)) == len(ids):
                continue  # no id twice (most responses): no Counter needed
            for tool_id, count in sorted(Counter(ids).items()):
                if count > 1:
                    what = f"is used {count} times in the response of call {call.index}"
                    yield self.finding(call, tool_id, what=what)
        names = {(run.id, run.call): run.name or "?" for run in ctx.trace.tool_runs}
        reuses: dict[tuple[int, str], list[IdCollision]] = {}
        for collision in ctx.trace.id_collisions:
            if collision.first_call == collision.second_call:
                continue  # same-response duplicates are reported above
            reuses.setdefault((collision.loop, collision.tool_id), []).append(collision)
        for collisions in reuses.values():
            # Once per id and loop: a provider that numbers calls per response (call_0 in
            # every response) would otherwise repeat this finding at every call.
            collision = collisions[0]
            at = collision.second_call
            first = names.get((collision.tool_id, collision.first_call), "?")
            second = names.get((collision.tool_id, at), "?")
            earlier = (
                f"call {collision.first_call} ({first})"
                if collision.first_call is not None
                else f"an earlier message ({first})"
            )
            later = {c.second_call for c in collisions}
            more = (
                f" and {len(later) - 1} later call{'s' if len(later) > 2 else ''}"
                if len(later) > 1
                else ""
            )
            what = (
                f"is reused by call {at} ({second}){more} after {earlier}; results pair with the"
                " newest"
            )
            if at is None:
                yield self.finding(None, collision.tool_id, what=what, loop=collision.loop)
            else:
                yield self.finding(ctx.call(at), collision.tool_id, what=what)
