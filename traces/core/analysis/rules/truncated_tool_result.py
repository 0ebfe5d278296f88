"""Rule truncated-tool-result."""

from __future__ import annotations

import re
from collections.abc import Iterator

import orjson

from traces.core.patterns import lazy_compile

from ._common import name_of, sent_results
from .base import Finding, LintContext, Rule
from .registry import register

ROUND_SIZES = frozenset(
    {
        1000,
        1024,
        2000,
        2048,
        4000,
        4096,
        5000,
        8000,
        8192,
        10000,
        16000,
        16384,
        20000,
        32000,
        32768,
        50000,
        65536,
        100000,
    }
)
"""Lengths a tool cuts output to (characters or UTF-8 bytes)."""
HONEST_MARKER = lazy_compile(
    r"truncat|showing \d[\d,]* (?:of|out of) \d|\bmore results\b|\bnarrow\b|\bpage\b|"
    r"next_?cursor|next_?page|page_?token|\bhas_more\b|\bomitted\b|\bremaining\b|"
    r"\bfirst \d[\d,]* (?:of|lines|results|items|entries|bytes|characters)\b|"
    r"\[\s*\.\.\.|\.\.\.\s*\]|\(\s*\d[\d,]* more",
    re.IGNORECASE,
)
"""Words a tool uses to say that it cut its output, or how to get the rest."""
MARKER_KEYS = (
    "truncat", "showing", "more", "narrow", "page", "next", "omitted", "remaining",
    "first", "...",
)  # fmt: skip
"""A piece of text every branch of HONEST_MARKER contains (`has_more` holds "more",
`page_token` "page"): ASCII text holding none of them cannot match, and scanning a long
result for ten substrings is ~100 times cheaper than running the pattern over it."""
_JSON_TOKENS = lazy_compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\]]', re.DOTALL)
"""JSON strings (escapes consumed, so a final quote always closes; possibly unterminated)
and brackets, for the cut-record check."""


@register
class TruncatedToolResult(Rule):
    """A tool result cut off mid-record without saying so.

    What it finds
    A tool result that looks cut rather than complete: JSON that stops inside an object
    or array (unclosed brackets or string at the end), or text exactly a round size long
    (1000, 1024, 2048, 4096, 8192, 10000, 16384, 32768, 65536… characters or bytes), with
    no honest marker or next step anywhere in it ("truncated", "showing 10 of 340",
    "more results", "narrow", "page", "next_cursor", "omitted"…).

    Why it matters
    A JSON object sliced at a byte offset is read as complete: the model answers from a
    fragment without noticing, and tells the user they have ten orders when they have
    340.

    Example
    `search_orders` returns the first 4096 characters of a 60 KB array, ending in
    `{"order_id": "SU-88`.

    How to fix
    Cap results at the tool, at a record boundary, and say so with a way forward:
    "showing 10 of 340 orders, most recent first; narrow with a date range" or a page
    token.
    """

    id = "truncated-tool-result"
    severity = "warning"
    message = (
        "result of {name} ({tool_call_id}) {how} and does not say so; cut at a record"
        " boundary and add 'showing N of M' with a way to get the rest"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for sent in sent_results(ctx):
            text = sent.block.text
            how = _how_cut(text)
            if how is None or _says_it_was_cut(text):
                continue
            yield self.finding(sent.call, sent.block.tool_id, name=name_of(sent.run), how=how)


def _says_it_was_cut(text: str) -> bool:
    """HONEST_MARKER found in the text; ASCII text is first checked for MARKER_KEYS (for
    ASCII, case-insensitive matching is matching the lower-cased text)."""
    if text.isascii():
        lowered = text.lower()
        if not any(key in lowered for key in MARKER_KEYS):
            return False
    return HONEST_MARKER.search(text) is not None


def _how_cut(text: str) -> str | None:
    """Why the text looks cut off, or None when it looks whole."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and _unclosed_json(stripped):
        return f"is JSON that stops mid-record after {len(text):,} characters"
    if len(text) in ROUND_SIZES:
        return f"is exactly {len(text):,} characters long"
    size = len(text.encode("utf-8", "surrogatepass"))
    if size in ROUND_SIZES:
        return f"is exactly {size:,} bytes long"
    return None


def _unclosed_json(text: str) -> bool:
    """True for JSON (or JSON Lines) whose last record is cut: brackets or a string open.

    Text that is valid JSON, or that closes a bracket it never opened, is not a cut.
    """
    try:
        orjson.loads(text)
        return False
    except orjson.JSONDecodeError:
        pass
    openers: list[str] = []
    for token in _JSON_TOKENS.finditer(text):
        piece = token.group()
        if piece[0] == '"':
            if len(piece) == 1 or piece[-1] != '"':
                return True  # a string still open at the end
        elif piece in "{[":
            openers.append(piece)
        elif not openers or "{[".index(openers.pop()) != "}]".index(piece):
            return False
    return bool(openers)
