"""What a loop's transcript said so far, for serial-independent-calls (not a rule: the
registry skips `_*` modules).

Values are compared case folded with whitespace collapsed (`normalise`), as whole words
(`contains_word`). A lookup goes through a word index of the transcript's messages, and
its answer is remembered: a loop of n calls costs time linear in n, not the quadratic of
searching the whole transcript again at every call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from traces.core.records import dataclass, field

from ...model import Call, Message

_WORD = re.compile(r"\w+")
_ASCII_WORDS = bytes(
    ord(chr(byte).lower())
    if chr(byte).isascii() and (chr(byte).isalnum() or byte == ord("_"))
    else ord(" ")
    for byte in range(256)
)
"""bytes.translate table: ASCII word characters kept (letters lowered), every other byte
a space: one pass instead of a lower() and a translate()."""


def significant_values(value: Any, shortest: int) -> Iterator[str]:
    """String and number leaves of arguments, as text, skipping trivially short ones."""
    return iter(significant_list(value, shortest))


def significant_list(value: Any, shortest: int) -> list[str]:
    """`significant_values` as a list."""
    leaves: list[str] = []
    _collect_leaves(value, shortest, leaves)
    return leaves


def _collect_leaves(value: Any, shortest: int, leaves: list[str]) -> None:
    """`significant_values` into a list: one call a container, not a generator a leaf."""
    if isinstance(value, str):
        if len(value) >= shortest:
            leaves.append(value)
    elif isinstance(value, dict):
        for key in sorted(value, key=str) if len(value) > 1 else value:
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


def normalise(text: str) -> str:
    """Case folded, whitespace collapsed and stripped: how values are compared."""
    return " ".join(text.casefold().split())


def message_text(message: Message) -> str:
    pieces: list[str] = []
    for block in message.blocks:
        if block.text:
            pieces.append(block.text)
        if block.kind == "tool_use":
            pieces.append(block.name or "")
            _collect_leaves(block.input, 1, pieces)
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
    start = text.find(value)
    if start < 0:
        return False
    head, tail = _is_word_char(value[0]), _is_word_char(value[-1])
    while start >= 0:
        end = start + len(value)
        before_ok = not head or start == 0 or not _is_word_char(text[start - 1])
        after_ok = not tail or end == len(text) or not _is_word_char(text[end])
        if before_ok and after_ok:
            return True
        start = text.find(value, start + 1)
    return False


class Reply:
    """A response message whose text (and normalised text) is made when first asked for:
    a reply is looked into only when its call's successor is tested, and its text is
    what the next request echoes."""

    __slots__ = ("_normalised", "_text", "message")

    def __init__(self, message: Message | None) -> None:
        self.message = message
        self._text: str | None = None
        self._normalised: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = message_text(self.message) if self.message is not None else ""
        return self._text

    @property
    def normalised(self) -> str:
        if self._normalised is None:
            self._normalised = normalise(self.text)
        return self._normalised


@dataclass(slots=True)
class SeenValues:
    """What a loop's transcript said so far, indexed so a lookup never rescans it.

    Messages get ids in the order they join the transcript; the set of those still in it
    (a history rewrite drops some) is `live`. A word index maps each word to the messages
    holding it; a value is looked up through the messages holding its rarest word, newest
    first, and an answer is remembered with the newest message it covers.

    Messages are indexed only when a lookup needs the index (`pending` until then): a
    value found before whose message is still in the transcript is answered from memory,
    and in a long loop that asks the same things again most messages are never split
    into words at all. Each message is still indexed at most once.
    """

    order: list[int] = field(default_factory=list)
    """Message ids of the current transcript, in order."""
    pending: list[tuple[int, Message, Reply]] = field(default_factory=list)
    """Messages not indexed yet (in id order), each with the reply it may echo."""
    texts: dict[int, str] = field(default_factory=dict)
    """Normalised text of the messages looked into so far."""
    raw: dict[int, str] = field(default_factory=dict)
    """Text of the indexed messages not looked into yet."""
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
    wanting: Callable[[], set[str]] | None = None
    """Makes `wanted` when the index is first needed (a loop answered from memory never
    needs it)."""
    reply: Reply = field(default_factory=lambda: Reply(None))
    """The last reply tested: the next request echoes it."""
    wanted_ascii: set[bytes] | None = None
    """The ASCII words of `wanted`, encoded: what an ASCII message is split against."""

    def follow(self, call: Call) -> None:
        """Move to call's request: keep its shared prefix, add what it appended."""
        if call.prefix_len < len(self.order):
            for dropped in self.order[call.prefix_len :]:
                self.live.discard(dropped)
            del self.order[call.prefix_len :]
        for message in call.appended:
            ident = self.next_id
            self.next_id += 1
            self.order.append(ident)
            self.live.add(ident)
            self.pending.append((ident, message, self.reply))
        if call.system is not self.system and call.system != self.system:
            self.system = call.system
            self.system_text = normalise(_system_text(call.system))

    def _index_pending(self) -> None:
        """Index the messages added since the last lookup that needed the index; one
        dropped before that can never match and is skipped."""
        if self.wanting is not None:
            self.wanted, self.wanting = self.wanting(), None
        for ident, message, reply in self.pending:
            if ident not in self.live:
                continue
            text = message_text(message)
            if text == reply.text:
                self.texts[ident] = reply.normalised
            else:
                self.raw[ident] = text
            # Collapsing whitespace changes no \w+ word: the words of the case-folded
            # text are the words of its normalised form.
            for word in self._words_of(text):
                self.words.setdefault(word, []).append(ident)
        self.pending.clear()

    def _words_of(self, text: str) -> Iterable[str]:
        """The distinct (wanted) \\w+ words of the case-folded text. ASCII text, most of
        a transcript, is split as bytes: a translate to spaces and a split find the same
        words as the pattern (ASCII \\w is [A-Za-z0-9_], case folding is lowering) at a
        sixth of its cost."""
        if text.isascii():
            pieces = text.encode().translate(_ASCII_WORDS).split()
            if self.wanted is None:
                return {piece.decode() for piece in pieces}
            if self.wanted_ascii is None:
                self.wanted_ascii = {w.encode() for w in self.wanted if w.isascii()}
            return [piece.decode() for piece in self.wanted_ascii.intersection(pieces)]
        found = _WORD.findall(text.casefold())
        return set(found) if self.wanted is None else self.wanted.intersection(found)

    def before_result(self, call: Call) -> Callable[[str], bool]:
        """A test of values against call's system, request and reply (not its result)."""
        reply = self.reply = Reply(call.response)
        system = self.system_text

        def known(value: str) -> bool:
            wanted = normalise(value)
            if not wanted:
                return False
            holder = self.found.get(wanted)
            if holder is not None and holder in self.live:
                return True  # the cheapest answer first: the value was seen and is kept
            return (
                contains_word(reply.normalised, wanted)
                or contains_word(system, wanted)
                or self._in_transcript(wanted)
            )

        return known

    def _in_transcript(self, value: str) -> bool:
        holder = self.found.get(value)
        if holder is not None and holder in self.live:
            return True
        if self.pending:
            self._index_pending()
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
