"""What a Go `go-vcr` cassette records of an interaction's status and timing.

go-vcr (github.com/dnaeon/go-vcr, cassette format version 2, `pkg/cassette/cassette.go`)
writes each response with `status: "200 OK"` (the status line's text), `code: 200` (the
number) and `duration: 125.432436ms` (Go's `time.Duration` text: how long the round trip
took), beside the headers it got. It records no clock time of its own; the response's
`Date` header is the server's, in whole seconds, stamped when it sent the response head:
after the whole generation for a JSON answer (the call started `duration` before it), at
the first event of a stream (the call started about then). vcrpy cassettes have none of
`code` or `duration` and keep `status: {code, message}`.
"""

from __future__ import annotations

import re
from typing import Any

_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,  # Go writes the micro sign
    "\u03bcs": 1e-6,  # and accepts the Greek mu
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_STATUS_LINE = re.compile(r"\s*(\d{3})\b")


def is_go_vcr(response: dict[str, Any]) -> bool:
    """go-vcr's response: a numeric `code` or a `duration` beside the status text."""
    code = response.get("code")
    return "duration" in response or (isinstance(code, int) and not isinstance(code, bool))


def status_code(response: dict[str, Any]) -> Any:
    """The HTTP status number: go-vcr's `code`, else the status line's number."""
    code = response.get("code")
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    status = response.get("status")
    if isinstance(status, str):
        found = _STATUS_LINE.match(status)
        return int(found.group(1)) if found else None
    return status


def duration_seconds(value: Any) -> float | None:
    """Go's `time.Duration` as written: text such as `1m2.5s` or `812ms`, or a number of
    nanoseconds (the type's unit). None for anything else (an empty string, a sign)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value / 1e9 if value >= 0 else None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text == "0":
        return 0.0
    position, total = 0, 0.0
    for part in _PART.finditer(text):
        if part.start() != position:
            return None
        total += float(part.group(1)) * _UNIT_SECONDS[part.group(2)]
        position = part.end()
    return total if position == len(text) and position > 0 else None


def times(response: dict[str, Any]) -> tuple[float | None, float | None]:
    """(started, ended) in epoch seconds, from the `Date` header and the duration."""
    duration = duration_seconds(response.get("duration"))
    stamped = _date_header(response.get("headers"))
    if stamped is None:
        return None, None
    if duration is None:
        return None, stamped
    if "text/event-stream" in (_header(response.get("headers"), "content-type") or ""):
        return stamped, stamped + duration
    return stamped - duration, stamped


def _header(headers: Any, name: str) -> str | None:
    if not isinstance(headers, dict):
        return None
    for key, value in headers.items():
        if str(key).lower() == name:
            first = value[0] if isinstance(value, list) and value else value
            return first if isinstance(first, str) else None
    return None


def _date_header(headers: Any) -> float | None:
    text = _header(headers, "date")
    if text is None:
        return None
    # Imported here: email.utils brings socket, random and email's charsets, a few ms of
    # every command's start-up, and only a go-vcr cassette's Date header needs it.
    from email.utils import parsedate_to_datetime

    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return moment.timestamp() if moment.tzinfo is not None else None
