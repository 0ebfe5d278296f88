"""Rule serial-independent-calls."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import pairwise
from typing import Any

from traces.core.records import dataclass, field

from ...model import Block, Call, Message, ToolRun
from ._common import asked_runs, canonical, tool_uses
from .base import Finding, LintContext, Rule
from .registry import register

_WORD = re.compile(r"\w+")
_ASCII_NON_WORD = bytes(
    byte if chr(byte).isascii() and (chr(byte).isalnum() or byte == ord("_")) else ord(" ")
    for byte in range(256)
)
"""bytes.translate table: ASCII word characters kept, every other byte a space."""


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
        for calls in ctx.loop_calls.values():
            seen = SeenValues(wanted=argument_words(calls[1:], shortest))
            for previous, call in pairwise(calls):
                seen.follow(previous)
                if not _serial_pair(previous, call, runs):
                    continue
                (asked,) = tool_uses(previous)
                later = list(tool_uses(call))
                if any(_same_call(asked, use, shortest) for use in later):
                    continue  # a retry or a poll of the same thing, not a new question
                known = seen.before_result(previous)
                if all(_known(use.input, known, shortest) for use in later):
                    first = later[0]
                    tokens = ctx.accounting.calls[call.index - 1].input_tokens
                    yield self.finding(
                        call,
                        first.tool_id,
                        name=_names(later),
                        previous=previous.index,
                        previous_name=asked.name or "?",
                        tokens=f"{tokens:,}",
                    )


def _serial_pair(previous: Call, call: Call, runs: dict[int, list[ToolRun]]) -> bool:
    """Call k asked one tool, call k+1 carried its successful result and asked tools."""
    if previous.status != "ok" or call.status != "ok":
        return False
    if len(list(tool_uses(previous))) != 1 or not list(tool_uses(call)):
        return False
    asked = runs.get(previous.index, [])
    return (
        len(asked) == 1
        and asked[0].result_call == call.index
        and not asked[0].is_error
        and not asked[0].error_inferred
        and call.base_call == previous.index
    )


def _same_call(first: Block, second: Block, shortest: int) -> bool:
    """The same tool on the same significant values (a retry, or polling a job)."""
    if first.name != second.name:
        return False
    if canonical(first.input) == canonical(second.input):
        return True
    return list(significant_values(first.input, shortest)) == list(
        significant_values(second.input, shortest)
    )


def _names(uses: list[Block]) -> str:
    names = [use.name or "?" for use in uses]
    return names[0] if len(names) == 1 else f"{len(names)} tools ({', '.join(names[:3])})"


def significant_values(value: Any, shortest: int) -> Iterator[str]:
    """String and number leaves of arguments, as text, skipping trivially short ones."""
    leaves: list[str] = []
    _collect_leaves(value, shortest, leaves)
    return iter(leaves)


def _collect_leaves(value: Any, shortest: int, leaves: list[str]) -> None:
    """`significant_values` into a list: one call a container, not a generator a leaf."""
    if isinstance(value, str):
        if len(value) >= shortest:
            leaves.append(value)
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            _collect_leaves(value[key], shortest, leaves)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_leaves(item, shortest, leaves)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        text = repr(value)
        if len(text) >= shortest:
            leaves.append(text)


def argument_words(calls: list[Call], shortest: int) -> set[str]:
    """The words of every value the calls' tool arguments could be looked up with: the
    only words a transcript's index needs (see `SeenValues.wanted`)."""
    words: set[str] = set()
    for call in calls:
        for use in tool_uses(call):
            for value in significant_values(use.input, shortest):
                words.update(_WORD.findall(normalise(value)))
    return words


def _known(arguments: Any, known: Callable[[str], bool], shortest: int) -> bool:
    """Every significant argument value was seen (and there is at least one)."""
    values = list(significant_values(arguments, shortest))
    return bool(values) and all(known(value) for value in values)


def normalise(text: str) -> str:
    """Case folded, whitespace collapsed and stripped: how values are compared."""
    return " ".join(text.casefold().split())


def _message_text(message: Message) -> str:
    pieces: list[str] = []
    for block in message.blocks:
        if block.text:
            pieces.append(block.text)
        if block.kind == "tool_use":
            pieces.append(block.name or "")
            pieces.extend(significant_values(block.input, 1))
    return "\n".join(pieces)


def _system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    return "\n".join(significant_values(system, 1)) if system else ""


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def contains_word(text: str, value: str) -> bool:
    """`value` occurs in `text` as whole words: no word character glued to an end of it
    that is itself a word character ("tom" is not in "tomorrow"; "-x" is in "a-x")."""
    head, tail = _is_word_char(value[0]), _is_word_char(value[-1])
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        before_ok = not head or start == 0 or not _is_word_char(text[start - 1])
        after_ok = not tail or end == len(text) or not _is_word_char(text[end])
        if before_ok and after_ok:
            return True
        start = text.find(value, start + 1)
    return False


@dataclass(slots=True)
class SeenValues:
    """What a loop's transcript said so far, indexed so a lookup never rescans it.

    One entry per request message (normalised text), a word index from each word to the
    messages holding it, and the set of messages still in the transcript (a history
    rewrite drops some). A value is looked up through the messages holding its rarest
    word, newest first, and an answer is remembered with the newest message it covers:
    a loop of n calls costs time linear in n, not the quadratic of searching the whole
    transcript again at every call.
    """

    order: list[int] = field(default_factory=list)
    """Message ids of the current transcript, in order."""
    texts: dict[int, str] = field(default_factory=dict)
    """Normalised text of the messages looked into so far."""
    raw: dict[int, str] = field(default_factory=dict)
    """Text of the messages not looked into yet."""
    words: dict[str, list[int]] = field(default_factory=dict)
    live: set[int] = field(default_factory=set)
    next_id: int = 0
    found: dict[str, int] = field(default_factory=dict)
    """A value and a message that holds it."""
    absent: dict[str, int] = field(default_factory=dict)
    """A value and the last message id searched without finding it."""
    system: Any = None
    system_text: str = ""
    wanted: set[str] | None = None
    """The words lookups will use, when known: only those are indexed (a message's other
    words could never select it), which spares most of the indexing."""
    reply: tuple[str, str] = ("", "")
    """The last reply's text and its normalised form: the next request echoes it."""
    wanted_ascii: set[bytes] | None = None
    """The ASCII words of `wanted`, encoded: what an ASCII message is split against."""

    def follow(self, call: Call) -> None:
        """Move to call's request: keep its shared prefix, add what it appended."""
        for dropped in self.order[call.prefix_len :]:
            self.live.discard(dropped)
        del self.order[call.prefix_len :]
        for message in call.appended:
            text = _message_text(message)
            self._add(text, self.reply[1] if text == self.reply[0] else None)
        if call.system is not self.system and call.system != self.system:
            self.system = call.system
            self.system_text = normalise(_system_text(call.system))

    def _add(self, text: str, normalised: str | None) -> None:
        """Index a message's words; its normalised text is kept when known, else made at
        its first lookup (most messages are never looked into: only their words are)."""
        ident = self.next_id
        self.next_id += 1
        self.order.append(ident)
        self.live.add(ident)
        if normalised is None:
            self.raw[ident] = text
        else:
            self.texts[ident] = normalised
        # Collapsing whitespace changes no \w+ word: the words of the case-folded text
        # are the words of its normalised form.
        for word in self._words_of(text if normalised is None else normalised):
            self.words.setdefault(word, []).append(ident)

    def _words_of(self, text: str) -> Iterable[str]:
        """The distinct (wanted) \\w+ words of the case-folded text. ASCII text, most of
        a transcript, is split as bytes: a translate to spaces and a split find the same
        words as the pattern (ASCII \\w is [A-Za-z0-9_], case folding is lowering) at a
        sixth of its cost."""
        if text.isascii():
            pieces = text.encode().lower().translate(_ASCII_NON_WORD).split()
            if self.wanted is None:
                return {piece.decode() for piece in pieces}
            if self.wanted_ascii is None:
                self.wanted_ascii = {w.encode() for w in self.wanted if w.isascii()}
            return [piece.decode() for piece in self.wanted_ascii.intersection(pieces)]
        found = _WORD.findall(text.casefold())
        return set(found) if self.wanted is None else self.wanted.intersection(found)

    def before_result(self, call: Call) -> Callable[[str], bool]:
        """A test of values against call's system, request and reply (not its result)."""
        reply = ""
        if call.response is not None:
            text = _message_text(call.response)
            reply = normalise(text)
            self.reply = (text, reply)
        system = self.system_text

        def known(value: str) -> bool:
            wanted = normalise(value)
            if not wanted:
                return False
            return (
                contains_word(reply, wanted)
                or contains_word(system, wanted)
                or self._in_transcript(wanted)
            )

        return known

    def _in_transcript(self, value: str) -> bool:
        holder = self.found.get(value)
        if holder is not None and holder in self.live:
            return True
        searched = self.absent.get(value, -1)
        words = _WORD.findall(value)
        if words:
            candidates = min((self.words.get(word, ()) for word in words), key=len)
        else:
            candidates = self.order
        for ident in reversed(candidates):
            if ident <= searched:
                break  # searched already: nothing older can hold it
            if ident in self.live and contains_word(self._text(ident), value):
                self.found[value] = ident
                return True
        self.absent[value] = self.next_id - 1
        return False

    def _text(self, ident: int) -> str:
        """A message's normalised text, made the first time a lookup needs it."""
        text = self.texts.get(ident)
        if text is None:
            text = self.texts[ident] = normalise(self.raw.pop(ident))
        return text
