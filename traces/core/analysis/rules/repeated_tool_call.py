"""Rule repeated-tool-call."""

from __future__ import annotations

from collections.abc import Iterator

from ._common import canonical, tool_uses
from .base import Finding, LintContext, Rule
from .registry import register


@register
class RepeatedToolCall(Rule):
    """The same tool called with the same arguments again and again.

    What it finds
    A loop that asks one tool with identical arguments (compared as canonical JSON) at
    least `min_repeats` times (default 3). One finding, at the call that reaches the
    threshold. It cannot tell a retry loop from a deliberate re-check after a change
    (running the same test command after each edit); read it with that in mind.

    Why it matters
    Identical calls usually get identical results: the model is retrying because the
    result did not tell it what to do (a bare "error"), and each try re-sends the whole
    transcript until the turn cap stops the loop.

    Example
    `check_availability("tom", "slot_3")` returns `error`; the model asks it three more
    times with the same arguments.

    How to fix
    Make the result actionable ("calendar service timed out after 5 s; retry later or
    skip Tom"), cap identical retries in the loop, and return the cap as a result.
    """

    id = "repeated-tool-call"
    severity = "warning"
    message = (
        "call {call} asks {name} with the same arguments for the {nth} time (calls {calls});"
        " a retry loop: make the result say what to do instead"
    )
    defaults = {"min_repeats": 3}

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        threshold = max(2, int(self.options["min_repeats"]))
        for loop in sorted(ctx.loop_calls):
            seen: dict[tuple[str, bytes], list[int]] = {}
            for call in ctx.loop_calls[loop]:
                for block in tool_uses(call):
                    key = (block.name or "", canonical(block.input))
                    calls = seen.setdefault(key, [])
                    calls.append(call.index)
                    if len(calls) == threshold:
                        yield self.finding(
                            call,
                            block.tool_id,
                            name=block.name or "?",
                            nth=_ordinal(threshold),
                            calls=", ".join(str(index) for index in calls),
                        )


def _ordinal(number: int) -> str:
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"
