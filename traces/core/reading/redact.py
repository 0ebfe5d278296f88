"""Credentials redacted from a trace's decoded text before it is stored (shared mode).

Recorded HTTP traffic carries `Authorization` and `x-api-key` values, tool arguments carry
passwords, transcripts carry pasted keys; on a shared instance none of them may reach the
stored original, its blobs or any page. What is a credential is `secret_rule`'s one rule
(the pages mask by it too); this module finds it in the bytes, in every shape a trace
records it: a JSON member (also inside a JSON string, as tool arguments are), a header or
attribute container, a `{name, value}` or `{key, value}` pair (HAR, OTLP), a YAML line or
list item (VCR cassettes), a URL's query string, and a secret's own shape anywhere.

Only the matched spans change: lines, their count and everything else stay byte-identical,
so offsets of live traces and line numbers of errors still hold. Redacting twice changes
nothing more. Whole uploads (gzip, ZIP) are decoded first: `upload_redaction`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from traces.core.records import dataclass

from .redact_yaml import redact_yaml
from .secret_rule import (
    ATTRIBUTE_CONTAINERS,
    FIELD_WORDS,
    REDACTED,
    SHAPES,
    Shape,
    secret_field,
    secret_name,
)

REPLACEMENT = REDACTED
SHAPE_PATTERNS: tuple[tuple[Shape, re.Pattern[bytes], tuple[bytes, ...]], ...] = tuple(
    (shape, re.compile(shape.pattern.encode()), tuple(h.encode() for h in shape.hints))
    for shape in SHAPES
)
"""Each shape of `secret_rule` on its own with its hints, for whole files (see `Shape`).
Compiled here, not in `secret_rule`: the pages and the command line mask texts with
`SHAPES_TEXT` alone, and need not compile these 17 patterns at start-up."""
_Replacer = Callable[[re.Match[bytes]], bytes]
SCOPE_BYTES = 4 * 1024 * 1024
"""How far a header or attribute container is followed (real ones are a few KB)."""

_STRING = rb'"(?:[^"\\\n]|\\.)*"'
_NAME = rb'[^"\\\n]{0,60}?(?:' + FIELD_WORDS.encode() + rb')[^"\\\n]{0,60}?'
_MEMBER = re.compile(
    rb'"(?P<name>'
    + _NAME
    + rb')"\s*:\s*(?P<value>'
    + _STRING
    + rb"|\[\s*(?:"
    + _STRING
    + rb"\s*,?\s*)*\])",
    re.IGNORECASE,
)
"""A JSON member whose name may be secret, with a string (or string array) value."""
_ESCAPED_STRING = rb'\\"(?:[^"\\\n]|\\\\(?:\\"|\\\\|[^"\\])|\\[^"\\])*\\"'
_ESCAPED_MEMBER = re.compile(
    rb'\\"(?P<name>' + _NAME + rb')\\"\s*:\s*(?P<value>' + _ESCAPED_STRING + rb")",
    re.IGNORECASE,
)
"""The same inside a JSON string (`"arguments": "{\\"password\\": \\"…\\"}"`)."""
_ANY_MEMBER = re.compile(
    rb'"(?P<name>[^"\\\n]{1,200})"\s*:\s*(?P<value>'
    + _STRING
    + rb"|\[\s*(?:"
    + _STRING
    + rb"\s*,?\s*)*\])"
)
_CONTAINER = re.compile(
    rb'"(?P<name>[^"\\\n]{0,60}headers?|'
    + b"|".join(n.encode() for n in ATTRIBUTE_CONTAINERS)
    + rb')"\s*:\s*\{',
    re.IGNORECASE,
)
"""A header or attribute container (a dict): every member whose name is secret goes."""
_PAIR = re.compile(rb'\{\s*"(?:name|key)"\s*:\s*"(?P<name>[^"\\\n]{1,200})"\s*,\s*"value"\s*:\s*')
"""A `{name, value}` (HAR) or `{key, value}` (OTLP attribute) entry: its value follows."""
_NAME_PAIR = re.compile(
    rb'\[\s*"(?P<name>[^"\\\n]{1,200})"\s*,\s*(?P<value>' + _STRING + rb")\s*\]"
)
"""A `["name", "value"]` header pair."""
_STRING_AT = re.compile(_STRING)
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_NAME_FOLLOWS = re.compile(rb"\s*:")
"""After a member name (`{"stringValue": "…"}` keeps its name)."""
_URL = re.compile(rb"(?:https?|wss?)://[^\s\"'<>\\?]{1,2000}\?[^\s\"'<>\\]{1,8000}")
_QUERY = re.compile(rb"(?<=[?&])(?P<name>[A-Za-z0-9_.\-\[\]]{1,80})=(?P<value>[^&#]+)")


@dataclass(frozen=True)
class Redacted:
    data: bytes
    fields: dict[str, int]
    """What was redacted, and how many times (empty: nothing)."""


def redact(data: bytes) -> Redacted:
    """`data` (decoded text: JSON lines, a JSON document, YAML, plain text) with credential
    values replaced by `[redacted]`."""
    found: Counter[str] = Counter()
    data = _redact_members(data, found)
    data = _redact_containers(data, found)
    data = _redact_pairs(data, found)
    if b":" in data and b"\n" in data:
        data = redact_yaml(data, found)
    if b"://" in data:
        data = _URL.sub(lambda match: _redact_query(match.group(), found), data)
    lowered = data.lower()
    for shape, pattern, hints in SHAPE_PATTERNS:
        text = lowered if shape.ignores_case else data
        if any(hint in text for hint in hints):
            data = pattern.sub(_shape_replacer(shape, found), data)
    return Redacted(data, dict(found))


def merge_fields(*counts: dict[str, int]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for count in counts:
        total.update(count)
    return dict(total)


def _label(name: bytes) -> str:
    return name.decode("utf-8", "replace").lower()


def _strings_redacted(value: bytes, pattern: re.Pattern[bytes], quote: bytes) -> bytes | None:
    """Every string in `value` that is not a member name replaced (keeping its quotes);
    None if all already were. Strings are found in order, so a name's closing quote is
    never taken for the start of a string."""
    replaced = quote + REPLACEMENT + quote
    pieces: list[bytes] = []
    position = 0
    changed = False
    for match in pattern.finditer(value):
        if match.group() == replaced or _NAME_FOLLOWS.match(value, match.end()):
            continue
        pieces += [value[position : match.start()], replaced]
        position = match.end()
        changed = True
    if not changed:
        return None
    pieces.append(value[position:])
    return b"".join(pieces)


def _member_replacer(found: Counter[str], escaped: bool = False) -> _Replacer:
    string = re.compile(_ESCAPED_STRING if escaped else _STRING)
    quote = b'\\"' if escaped else b'"'

    def replace(match: re.Match[bytes]) -> bytes:
        if not secret_field(match.group("name").decode("utf-8", "replace")):
            return match.group()
        value = _strings_redacted(match.group("value"), string, quote)
        if value is None:
            return match.group()
        found[_label(match.group("name"))] += 1
        whole = match.group()
        cut = match.start("value") - match.start()
        return whole[:cut] + value

    return replace


def _redact_members(data: bytes, found: Counter[str]) -> bytes:
    data = _MEMBER.sub(_member_replacer(found), data)
    if b'\\"' in data:
        data = _ESCAPED_MEMBER.sub(_member_replacer(found, escaped=True), data)
    return data


def _extent(data: bytes, start: int) -> int | None:
    """The end of the JSON object or array opening at `start`, or None past `SCOPE_BYTES`."""
    depth = 0
    for token in _TOKEN.finditer(data, start, min(len(data), start + SCOPE_BYTES)):
        mark = token.group()
        if mark in (b"{", b"["):
            depth += 1
        elif mark in (b"}", b"]"):
            depth -= 1
            if depth == 0:
                return token.end()
    return None


def _redact_containers(data: bytes, found: Counter[str]) -> bytes:
    """Inside header and attribute containers, names are judged by `secret_name`."""
    pieces: list[bytes] = []
    position = 0
    for match in _CONTAINER.finditer(data):
        start = match.end() - 1
        if start < position:
            continue  # inside a container already redacted
        end = _extent(data, start)
        if end is None:
            continue
        pieces.append(data[position:start])
        pieces.append(_ANY_MEMBER.sub(_scoped_replacer(found), data[start:end]))
        position = end
    if not pieces:
        return data
    pieces.append(data[position:])
    return b"".join(pieces)


def _scoped_replacer(found: Counter[str]) -> _Replacer:
    string = re.compile(_STRING)

    def replace(match: re.Match[bytes]) -> bytes:
        if not secret_name(match.group("name").decode("utf-8", "replace")):
            return match.group()
        value = _strings_redacted(match.group("value"), string, b'"')
        if value is None:
            return match.group()
        found[_label(match.group("name"))] += 1
        return match.group()[: match.start("value") - match.start()] + value

    return replace


def _redact_pairs(data: bytes, found: Counter[str]) -> bytes:
    """`{name, value}` / `{key, value}` entries and `[name, value]` pairs of secret names."""
    pieces: list[bytes] = []
    position = 0
    for match in _PAIR.finditer(data):
        start = match.end()
        if start < position or not secret_name(match.group("name").decode("utf-8", "replace")):
            continue
        if data[start : start + 1] == b'"':
            string = _STRING_AT.match(data, start)
            end = string.end() if string else None
        elif data[start : start + 1] in (b"{", b"["):
            end = _extent(data, start)
        else:
            continue  # a number or boolean: nothing to hide
        if end is None:
            continue
        value = _strings_redacted(data[start:end], _STRING_AT, b'"')
        if value is None:
            continue
        found[_label(match.group("name"))] += 1
        pieces += [data[position:start], value]
        position = end
    if pieces:
        pieces.append(data[position:])
        data = b"".join(pieces)

    def pair(match: re.Match[bytes]) -> bytes:
        if not secret_field(match.group("name").decode("utf-8", "replace")):
            return match.group()
        if match.group("value") == b'"' + REPLACEMENT + b'"':
            return match.group()
        found[_label(match.group("name"))] += 1
        whole = match.group()
        return (
            whole[: match.start("value") - match.start()]
            + b'"'
            + REPLACEMENT
            + b'"'
            + whole[match.end("value") - match.start() :]
        )

    return _NAME_PAIR.sub(pair, data)


def _redact_query(url: bytes, found: Counter[str]) -> bytes:
    def parameter(match: re.Match[bytes]) -> bytes:
        name = match.group("name")
        if match.group("value") == REPLACEMENT or not secret_name(name.decode("ascii")):
            return match.group()
        found["URL query key"] += 1
        return name + b"=" + REPLACEMENT

    return _QUERY.sub(parameter, url)


def _shape_replacer(shape: Shape, found: Counter[str]) -> _Replacer:
    return lambda match: _shape(shape, match, found)


def _shape(shape: Shape, match: re.Match[bytes], found: Counter[str]) -> bytes:
    named = match.groupdict().get("name")
    found[shape.label if named is None else _label(named)] += 1
    cut = match.end("keep") - match.start() if match.groupdict().get("keep") else 0
    whole = match.group()
    # A secret spanning lines (a PEM key) leaves its line breaks: the line count stays.
    return whole[:cut] + REPLACEMENT + b"\n" * whole[cut:].count(b"\n")
