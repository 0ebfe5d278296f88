"""Rule serial-independent-calls."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial

from ...model import Block, Call, ToolRun
from ._common import asked_runs, canonical, tool_uses
from ._seen_values import (
    SeenValues,
    contains_word,
    normalise,
    significant_list,
    significant_values,
)
from .base import Finding, LintContext, Rule
from .registry import register

_WORD = re.compile(r"\w+")

__all__ = ["SerialIndependentCalls", "contains_word", "significant_values"]


@register
class SerialIndependentCalls(Rule):
    """Independent tool calls issued one per round trip instead of in one batch.

    What it finds
    Two consecutive calls of a loop where call k asked exactly one tool and call k+1,
    which carries k's result, asked tools that did not need it: every argument value of
    k+1's calls (each string or number leaf, ignoring booleans, nulls and values shorter
    than `min_value_chars` characters, default 3) already appeared before k's result
    arrived, in call k's system prompt, request messages or response. Values match
    whatever their case and surrounding whitespace ("tom" is the user's "Tom"), as whole
    words ("tom" is not in "tomorrow"). Calls with no such
    argument prove nothing and are skipped, as are repeats of k's call on the same values
    (a retry, or polling a job) and pairs where k's result was an error, flagged or
    inferred from its text (the next call may be a fallback).

    It is a test on values: it cannot see that k's result changed what the model chose
    to do, nor whether the tools have side effects. Reads can fan out; writes should stay
    serial (two bookings of one slot must not race), and the rule cannot tell them apart.

    Why it matters
    Every round trip re-sends the whole transcript and adds a prefill and a decode of
    latency. Running two independent lookups one per turn doubles the turns for no
    information; the extra call's input tokens are the price.

    Example
    The model checks Priya's availability, gets the answer, then checks Tom's for the
    same slot: both calls were known after `find_free_slots`, and one message with two
    `tool_use` blocks would have done.

    How to fix
    Say in the system prompt or tool descriptions that independent calls should be made
    together in one response; make sure the loop runs every call of a response (and
    returns all results in one message) so parallel calls are safe to ask for.
    """

    id = "serial-independent-calls"
    severity = "warning"
    message = (
        "call {call} asked {name} ({tool_call_id}) one round trip after call {previous}"
        " asked {previous_name}, though all its arguments were known before that result;"
        " one parallel batch would have saved this call's {tokens} input tokens"
    )
    defaults = {"min_value_chars": 3}

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        shortest = int(self.options["min_value_chars"])
        runs = asked_runs(ctx)
        input_tokens = [account.input_tokens for account in ctx.accounting.calls]
        for calls in ctx.loop_calls.values():
            uses = [tool_uses(call) for call in calls]
            values = _Values(shortest)
            seen = SeenValues(wanting=partial(argument_words, uses[1:], values))
            for position in range(1, len(calls)):
                previous, call = calls[position - 1], calls[position]
                seen.follow(previous)
                asked_uses, later = uses[position - 1], uses[position]
                if not _serial_pair(previous, call, runs, asked_uses, later):
                    continue
                (asked,) = asked_uses
                if any(_same_call(asked, use, values) for use in later):
                    continue  # a retry or a poll of the same thing, not a new question
                known = seen.before_result(previous)
                if all(_known(values.of(use), known) for use in later):
                    yield self.finding(
                        call,
                        later[0].tool_id,
                        name=_names(later),
                        previous=previous.index,
                        previous_name=asked.name or "?",
                        tokens=f"{input_tokens[call.index - 1]:,}",
                    )


class _Values:
    """The significant values of each tool call's arguments, made once a block (a pair
    tests a call's blocks as the later call, then as the asked one)."""

    __slots__ = ("_made", "shortest")

    def __init__(self, shortest: int) -> None:
        self.shortest = shortest
        self._made: dict[int, tuple[Block, list[str]]] = {}

    def of(self, use: Block) -> list[str]:
        made = self._made.get(id(use))
        if made is None or made[0] is not use:
            made = self._made[id(use)] = (use, significant_list(use.input, self.shortest))
        return made[1]


def _serial_pair(
    previous: Call,
    call: Call,
    runs: dict[int, list[ToolRun]],
    asked_uses: tuple[Block, ...],
    later: tuple[Block, ...],
) -> bool:
    """Call k asked one tool, call k+1 carried its successful result and asked tools."""
    if previous.status != "ok" or call.status != "ok":
        return False
    if len(asked_uses) != 1 or not later:
        return False
    asked = runs.get(previous.index, [])
    return (
        len(asked) == 1
        and asked[0].result_call == call.index
        and not asked[0].is_error
        and not asked[0].error_inferred
        and call.base_call == previous.index
    )


def _same_call(first: Block, second: Block, values: _Values) -> bool:
    """The same tool on the same significant values (a retry, or polling a job)."""
    if first.name != second.name:
        return False
    if canonical(first.input) == canonical(second.input):
        return True
    return values.of(first) == values.of(second)


def _names(uses: tuple[Block, ...]) -> str:
    names = [use.name or "?" for use in uses]
    return names[0] if len(names) == 1 else f"{len(names)} tools ({', '.join(names[:3])})"


def argument_words(uses: list[tuple[Block, ...]], values: _Values) -> set[str]:
    """The words of every value the calls' tool uses could be looked up with: the only
    words a transcript's index needs (see `SeenValues.wanted`)."""
    words: set[str] = set()
    done: set[str] = set()
    for blocks in uses:
        for use in blocks:
            for value in values.of(use):
                if value not in done:
                    done.add(value)
                    words.update(_WORD.findall(normalise(value)))
    return words


def _known(values: list[str], known: Callable[[str], bool]) -> bool:
    """Every significant argument value was seen (and there is at least one)."""
    return bool(values) and all(known(value) for value in values)
