"""Content search, the database-free half: what text of a call is indexed, how a query
becomes words, and the snippet around a match.

Both databases' indexes (SQLite FTS5, PostgreSQL `tsvector`) see a call's text as runs of
letters and digits, everything else a separator, and a query as the words it holds, all
of them required. Reading the query here, to words only, is what keeps hostile input
(quotes, `OR`, `*`, `--`, NUL) from ever reaching either engine's query syntax, and the
snippet is cut from the stored text with the same idea of a word, so what matched is what
is marked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from traces.core.records import dataclass

from ..model import Block, Call, Message

PIECE_CHARS = 64 * 1024
"""Each piece of a call's text (a message block's text, one tool call's arguments, one
tool result) is indexed up to its first 64 KiB: a 1 MB tool result is searchable by
its beginning, and never makes the index grow with it."""
ENTRY_CHARS = 256 * 1024
"""A call's whole indexed text stops at 256 KiB: PostgreSQL refuses a `tsvector` over
1 MB, which a call's many pieces together could otherwise reach."""
MAX_TERMS = 8
TERM_CHARS = 64

_WORD = re.compile(r"[^\W_]+")


def search_terms(query: str) -> tuple[str, ...]:
    """The words of a search box's text, lowercased, each once, in order (at most
    `MAX_TERMS`; punctuation, operators and NUL are separators, never syntax)."""
    found: list[str] = []
    for word in _WORD.findall(query.lower()):
        word = word[:TERM_CHARS]
        if word not in found:
            found.append(word)
        if len(found) == MAX_TERMS:
            break
    return tuple(found)


def call_text(call: Call) -> str:
    """What content search indexes for a call: the text of the messages its request
    appended and of its response, tool calls' names and arguments, tool results."""
    messages: list[Message] = list(call.appended)
    if call.response is not None:
        messages.append(call.response)
    return joined(
        piece for message in messages for block in message.blocks for piece in _pieces(block)
    )


def _pieces(block: Block) -> Iterator[str]:
    if block.kind == "tool_use":
        if block.name:
            yield block.name
        if block.input is not None:
            yield block.input if isinstance(block.input, str) else _json(block.input)
    elif block.text:
        yield block.text


def _json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def joined(pieces: Iterable[str]) -> str:
    """Pieces capped at `PIECE_CHARS` each and `ENTRY_CHARS` together, one a line, NUL
    removed (PostgreSQL refuses it in text) and lone surrogates replaced (U+FFFD)."""
    out: list[str] = []
    size = 0
    for piece in pieces:
        piece = piece[:PIECE_CHARS].replace("\x00", " ")
        if not piece.strip():
            continue
        room = ENTRY_CHARS - size
        if room <= 0:
            break
        piece = piece[:room]
        out.append(piece)
        size += len(piece) + 1
    text = "\n".join(out)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in JSON): no database takes it
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


@dataclass(frozen=True, slots=True)
class Snippet:
    """A short stretch of a call's text and where the query's words are in it."""

    text: str
    marks: tuple[tuple[int, int], ...]
    """(start, end) offsets into `text` of each matched word, in order, not overlapping."""
    cut_before: bool = False
    cut_after: bool = False

    def parts(self) -> list[tuple[str, bool]]:
        """The text as (piece, marked) pairs, for a template to escape and wrap."""
        out: list[tuple[str, bool]] = []
        at = 0
        for start, end in self.marks:
            if start > at:
                out.append((self.text[at:start], False))
            out.append((self.text[start:end], True))
            at = end
        if at < len(self.text):
            out.append((self.text[at:], False))
        return out


def snippet(text: str, terms: tuple[str, ...], width: int = 200) -> Snippet:
    """About `width` characters of `text` around the first of its words that matches a
    term (a whole word, ignoring case), every matching word in that stretch marked.
    Whitespace runs become one space, so a snippet of a file's contents stays one line."""
    wanted = set(terms)
    first = None
    for match in _WORD.finditer(text):
        if match.group().lower() in wanted:
            first = match
            break
    start = 0 if first is None else max(0, first.start() - width // 3)
    end = min(len(text), start + width)
    if first is not None and first.end() > end:  # a long word: show its start
        end = first.end()
    # Do not cut a word in two at either end.
    while start > 0 and _is_word(text[start - 1]) and _is_word(text[start]):
        start += 1
    while end < len(text) and _is_word(text[end - 1]) and _is_word(text[end]):
        end -= 1
    stretch = text[start:end]
    shown: list[str] = []
    marks: list[tuple[int, int]] = []
    at = 0
    length = 0
    for match in _WORD.finditer(stretch):
        length = _append_spaced(shown, stretch[at : match.start()], length)
        word = match.group()
        if word.lower() in wanted:
            marks.append((length, length + len(word)))
        shown.append(word)
        length += len(word)
        at = match.end()
    _append_spaced(shown, stretch[at:], length)
    return Snippet("".join(shown), tuple(marks), start > 0, end < len(text))


def _append_spaced(shown: list[str], between: str, length: int) -> int:
    squeezed = re.sub(r"\s+", " ", between)
    shown.append(squeezed)
    return length + len(squeezed)


def _is_word(char: str) -> bool:
    return char.isalnum()
