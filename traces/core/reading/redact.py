"""Credentials redacted from a trace's bytes before they are stored (shared mode).

Recorded HTTP traffic carries `Authorization` and `x-api-key` values; on a shared
instance they must not reach the stored original, its blobs or any page. Only the
matched spans change: lines, their count and everything else stay byte-identical, so
offsets of live traces and line numbers of errors still hold.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

REDACTED_FIELDS = (
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "api_key",
    "apikey",
    "x-goog-api-key",
    "cookie",
    "set-cookie",
    "openai-organization",
    "openai-project",
)
REPLACEMENT = b"[redacted]"

_FIELD = re.compile(
    rb'"(' + b"|".join(re.escape(f.encode()) for f in REDACTED_FIELDS) + rb')"(\s*:\s*)"'
    rb'(?:[^"\\\n]|\\.)*"',
    re.IGNORECASE,
)
"""A JSON member whose name is a credential header: its string value goes."""

_YAML_FIELD = re.compile(
    rb"^(\s*-?\s*)(" + b"|".join(re.escape(f.encode()) for f in REDACTED_FIELDS) + rb")"
    rb"(:[ \t]*)(\S[^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)
"""The same as a YAML `key: value` line (recorded HTTP cassettes)."""

_PATTERNS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("bearer token", re.compile(rb"(?i)\bbearer\s+(?!\[redacted\])[A-Za-z0-9._~+/=-]{12,}")),
    ("sk- API key", re.compile(rb"\bsk-[A-Za-z0-9_-]{16,}")),
    ("AWS access key", re.compile(rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(rb"\bgh[pousr]_[A-Za-z0-9]{30,}\b")),
    ("Google API key", re.compile(rb"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("Slack token", re.compile(rb"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
)
"""Key shapes found anywhere (message text, escaped JSON inside strings, YAML lists)."""


@dataclass(frozen=True)
class Redacted:
    data: bytes
    fields: dict[str, int]
    """What was redacted, and how many times (empty: nothing)."""


def redact(data: bytes) -> Redacted:
    """`data` with credential values replaced by `[redacted]`."""
    found: Counter[str] = Counter()

    def field(match: re.Match[bytes]) -> bytes:
        found[match.group(1).decode("ascii").lower()] += 1
        return b'"' + match.group(1) + b'"' + match.group(2) + b'"' + REPLACEMENT + b'"'

    def yaml_field(match: re.Match[bytes]) -> bytes:
        found[match.group(2).decode("ascii").lower()] += 1
        return match.group(1) + match.group(2) + match.group(3) + REPLACEMENT

    data = _FIELD.sub(field, data)
    data = _YAML_FIELD.sub(yaml_field, data)
    for label, pattern in _PATTERNS:
        data, count = pattern.subn(REPLACEMENT, data)
        if count:
            found[label] += count
    return Redacted(data, dict(found))


def merge_fields(*counts: dict[str, int]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for count in counts:
        total.update(count)
    return dict(total)
