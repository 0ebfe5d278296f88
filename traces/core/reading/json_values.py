"""Parse one JSON text (a JSONL line, a whole document, a ZIP member) within the limits.

A text that would take too much memory (too many values, too deep, too long) is refused
before or right after parsing, and every failure is a `LineError` whose message is a
sentence for the person who owns the file, never orjson's own words.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from ..model import LineError
from .limits import DEFAULT_LIMITS, Limits

BOM = b"\xef\xbb\xbf"
SERIALISABLE_DEPTH = 254
"""orjson refuses to serialise past 254 levels: deeper values could not be stored again."""

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def value_count(raw: bytes | memoryview, limits: Limits = DEFAULT_LIMITS) -> int:
    """How many JSON values (at most) a text holds, counted without parsing it.

    Commas, colons and opening brackets outside strings bound the values (each value but
    the first of a container follows a comma, each member a colon). Counting them on the
    whole text first is cheap; strings are stripped only when that count is over the limit.
    """
    data = bytes(raw)
    count = _structural(data)
    if count <= limits.max_document_values:
        return count
    return _structural(_JSON_STRING.sub(b'""', data))


def _structural(data: bytes) -> int:
    """Commas, colons and opening brackets, plus one: each is a value, member or container
    the parse would allocate."""
    return sum(data.count(mark) for mark in (b",", b":", b"[", b"{")) + 1


def too_many_values(raw: bytes | memoryview, limits: Limits = DEFAULT_LIMITS) -> str | None:
    """Why the text would take too much memory to parse, or None (see `value_count`)."""
    if len(raw) <= limits.max_document_values:
        return None  # each counted mark is one byte of the text
    if value_count(raw, limits) > limits.max_document_values:
        return (
            f"holds more than {limits.max_document_values:,} JSON values; refused "
            "before parsing (it would take too much memory)"
        )
    return None


def parse_line(
    raw: bytes | memoryview,
    line: int,
    limits: Limits = DEFAULT_LIMITS,
    may_hold_nul: bool = True,
) -> Any:
    """Parse one JSONL line into a value, or a `LineError` saying what is wrong with it.

    `may_hold_nul=False` lets a caller that checked the whole file skip the per-line scan;
    lines are parsed straight from the memoryview, without a copy.
    """
    if len(raw) > limits.max_line_bytes:
        return LineError(line, f"line is {len(raw):,} bytes, over the {limits.max_line_bytes:,}")
    if raw[:3] == BOM:
        raw = raw[len(BOM) :]
    if may_hold_nul and b"\x00" in bytes(raw):
        return LineError(line, "contains a NUL byte; not a JSON text line")
    crowded = too_many_values(raw, limits)
    if crowded:
        return LineError(line, crowded)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return LineError(line, _explain(str(exc)))
    # A value needs at least two bytes per level, so short lines cannot be too deep.
    if len(raw) > 2 * limits.max_depth and _too_deep(value, limits):
        depth = min(limits.max_depth, SERIALISABLE_DEPTH)
        return LineError(line, f"nested deeper than {depth} levels; refused")
    return value


def concatenated_values(
    raw: bytes | memoryview, error: LineError, limits: Limits = DEFAULT_LIMITS
) -> list[Any] | None:
    """The JSON objects or arrays of a line that holds several with nothing between them
    (`{...}{...}`, as a writer that lost a newline leaves it), or None.

    Only a line that failed to parse as JSON is tried (a line refused for its size, a NUL
    or its depth stays refused), so good lines cost nothing. Each value must be an object
    or an array and the whole line must be used up; anything else stays the line's error.
    """
    if not error.message.startswith("not valid JSON"):
        return None
    data = bytes(raw)
    try:
        text = data.removeprefix(BOM).decode("utf-8").strip(" \t")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    while position < len(text):
        if text[position] not in "{[":
            return None
        try:
            _, end = decoder.raw_decode(text, position)
            # orjson parses each piece so that values read exactly as on any other line.
            value = orjson.loads(text[position:end])
        except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError
            return None
        if len(text) - position > 2 * limits.max_depth and _too_deep(value, limits):
            return None
        values.append(value)
        position = len(text) - len(text[end:].lstrip(" \t"))
    return values if len(values) > 1 else None


def _explain(orjson_message: str) -> str:
    """Turn orjson's message into a sentence for the person who owns the file."""
    text = orjson_message.split(": line ")[0]
    if text.startswith("unexpected end of data"):
        return "cut off mid-record (the JSON ends before it is complete)"
    if text.startswith("depth limit exceeded"):
        return "nested deeper than 1,024 levels; refused"
    if "not valid UTF-8" in text:
        return "not valid UTF-8 text"
    return f"not valid JSON ({text})"


def _too_deep(value: Any, limits: Limits) -> bool:
    """Whether the value nests deeper than allowed (and than can be stored again).

    orjson refuses to serialise past 254 levels, in C: trying it is far cheaper than
    walking the value in Python, so a walk is only made for stricter limits.
    """
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return True
    if limits.max_depth >= SERIALISABLE_DEPTH:
        return False
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > limits.max_depth:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, level + 1) for c in children if isinstance(c, (dict, list)))
    return False
