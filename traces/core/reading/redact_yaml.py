"""Credentials redacted from YAML text: the headers of recorded HTTP cassettes (VCR).

A cassette records a header as `name: value` or, as VCR writes them, as `name:` followed
by `- value` items, where a long value (a `Set-Cookie`) folds onto more-indented lines.
Every item of a secret name (`secret_rule.secret_field`) becomes `'[redacted]'` and its
folded lines are emptied, so the YAML still parses and every line keeps its number.
"""

from __future__ import annotations

import re
from collections import Counter

from .secret_rule import REDACTED, secret_field

_LINE_MEMBER = re.compile(
    rb"^(?P<keep>[ \t]*-?[ \t]*(?P<name>[A-Za-z0-9_.-]{1,80}):[ \t]*)(?P<value>[^\s#\n][^\n]*)",
    re.MULTILINE,
)
"""A `name: value` line."""
_LIST_MEMBER = re.compile(rb"^[ \t]*-?[ \t]*(?P<name>[A-Za-z0-9_.-]{1,80}):[ \t]*\r?\n", re.M)
"""A `name:` line whose value, if any, is the list of items on the lines below."""
ITEM = b"'" + REDACTED + b"'"
_DONE = (REDACTED, ITEM)


def redact_yaml(data: bytes, found: Counter[str]) -> bytes:
    """`data` with the values of secret YAML members replaced; counts go into `found`."""
    data = _LINE_MEMBER.sub(lambda match: _line(match, found), data)
    pieces: list[bytes] = []
    position = 0
    for match in _LIST_MEMBER.finditer(data):
        name = match.group("name").decode("ascii")
        if match.end() < position or not secret_field(name):
            continue
        end, items = _items(data, match.end())
        if items is None:
            continue
        found[name.lower()] += 1
        pieces += [data[position : match.end()], items]
        position = end
    if not pieces:
        return data
    pieces.append(data[position:])
    return b"".join(pieces)


def _line(match: re.Match[bytes], found: Counter[str]) -> bytes:
    name = match.group("name").decode("ascii")
    if not secret_field(name) or match.group("value").strip() in _DONE:
        return match.group()
    found[name.lower()] += 1
    return match.group("keep") + REDACTED


def _items(data: bytes, start: int) -> tuple[int, bytes | None]:
    """(end, redacted text) of the `- value` items from `start`; None when none changed."""
    lines: list[bytes] = []
    dash: int | None = None
    changed = False
    cursor = start
    while cursor < len(data):
        newline = data.find(b"\n", cursor)
        end = len(data) if newline < 0 else newline + 1
        line = data[cursor:end]
        text = line.rstrip(b"\r\n")
        body = text.lstrip(b" \t")
        indent = len(text) - len(body)
        if body.startswith(b"- ") and dash in (None, indent):
            dash = indent
            value = body[2:].strip()
            if value not in _DONE:
                text, changed = text[: indent + 2] + ITEM, True
        elif dash is not None and indent > dash and body:
            text, changed = b"", True  # a folded line of the item above
        else:
            break
        lines.append(text + line[len(line.rstrip(b"\r\n")) :])
        cursor = end
    return cursor, (b"".join(lines) if changed else None)
