"""Numbered JSON records, the one shape every reader hands to the adapters; JSONL lines.

Every malformed line becomes a `LineError` with its 1-based line number; the rest is
still read. A line that fails to parse but holds several whole JSON values with nothing
between them (pi wrote two records without a newline) yields each as its own record,
numbered with that line. `sources` chooses how an upload is read (JSONL here, a JSON
document, a YAML cassette, a ZIP archive, or text lines for the text formats); live tails
feed their lines through `numbered_items`.

A text log (`read_text`) is one `Record(line, str)` per non-blank line, the line without
its end of line (CR included) and, on the first line, without a BOM; blank lines count
but yield nothing (a format that keeps blank lines sees them in the gaps between line
numbers). A line that is not UTF-8, holds a NUL byte or is over the line limit is a
`LineError`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass

from ..model import LineError
from .json_values import BOM, concatenated_values, parse_line
from .limits import DEFAULT_LIMITS, InputRejected, Limits


@dataclass(frozen=True, slots=True)
class Record:
    """One parsed JSON value and where it came from (1-based line or item number)."""

    line: int
    value: Any


@dataclass(slots=True)
class Source:
    """The records of one input and how it was read (`jsonl`, `json`, `yaml`, `zip`, `text`).

    `items` is a list, except from `sources.stream_source`, where JSONL records are parsed
    one at a time as they are consumed (a record is gone once the adapter has read it).
    """

    layout: str
    lines_total: int
    items: Any


def lines_in(data: bytes) -> int:
    """How many lines a text has (a last line without a newline counts)."""
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def iter_lines(data: bytes) -> Iterator[tuple[int, memoryview]]:
    """Yield (1-based line number, line bytes) without copying, tolerating CRLF."""
    view = memoryview(data)
    start = 0
    number = 0
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end == -1:
            end = size
        number += 1
        stop = end
        if stop > start and data[stop - 1] == 0x0D:
            stop -= 1
        yield number, view[start:stop]
        start = end + 1


def numbered_items(
    lines: Sequence[bytes], first_line: int, limits: Limits = DEFAULT_LIMITS, text: bool = False
) -> Iterator[Record | LineError]:
    """Records and LineErrors of lines numbered from `first_line` (a live batch, each line
    with or without its newline); blank lines (after a BOM or CR) count but yield nothing,
    as in an upload. `text`: the lines of a text log (a format with `reads_text`), each
    a `str` record as `read_text` makes them."""
    for number, line in enumerate(lines, start=first_line):
        raw = line.rstrip(b"\n").rstrip(b"\r")
        if raw.startswith(BOM):
            raw = raw[len(BOM) :]
        if not raw.strip():
            continue
        if text:
            decoded = text_line(raw, number, limits)
            yield decoded if isinstance(decoded, LineError) else Record(number, decoded)
        else:
            yield from _records_of(raw, number, limits, True)


def _records_of(
    raw: bytes | memoryview, number: int, limits: Limits, may_hold_nul: bool
) -> Iterator[Record | LineError]:
    """The record of one line, the records of a line holding several values (tried only
    once the line failed to parse), or the line's error."""
    parsed = parse_line(raw, number, limits, may_hold_nul)
    if not isinstance(parsed, LineError):
        yield Record(number, parsed)
        return
    values = concatenated_values(raw, parsed, limits)
    if values is None:
        yield parsed
        return
    for value in values:
        yield Record(number, value)


def read_jsonl(data: bytes, limits: Limits) -> Source:
    lines_total = lines_in(data)
    if lines_total > limits.max_records:
        raise InputRejected(f"More than {limits.max_records:,} lines; refused.")
    return Source("jsonl", lines_total, _jsonl_items(data, limits))


def _jsonl_items(data: bytes, limits: Limits) -> Iterator[Record | LineError]:
    may_hold_nul = b"\x00" in data
    for number, raw in iter_lines(data):
        if not raw or (raw[0] in (0x20, 0x09) and not bytes(raw).strip()):
            continue
        yield from _records_of(raw, number, limits, may_hold_nul)


def text_line(raw: bytes | memoryview, number: int, limits: Limits) -> str | LineError:
    """One line of a text log as `str`, or why it cannot be read."""
    if len(raw) > limits.max_line_bytes:
        return LineError(number, f"line is {len(raw):,} bytes, over the {limits.max_line_bytes:,}")
    data = bytes(raw)
    if b"\x00" in data:
        return LineError(number, "contains a NUL byte; not a text line")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LineError(number, f"not valid UTF-8 text (byte {exc.start + 1} of the line)")


def text_head(data: bytes, records: int) -> list[str]:
    """The first `records` non-blank lines of a text, decoded leniently (for sniffing)."""
    head: list[str] = []
    for _, raw in iter_lines(data[:65536]):
        line = bytes(raw).decode("utf-8", errors="replace").lstrip("\ufeff")
        if line.strip():
            head.append(line)
            if len(head) >= records:
                break
    return head


def read_text(data: bytes, limits: Limits) -> Source:
    """A text log: one `str` record per non-blank line (see the module docstring)."""
    lines_total = lines_in(data)
    if lines_total > limits.max_records:
        raise InputRejected(f"More than {limits.max_records:,} lines; refused.")
    return Source("text", lines_total, _text_items(data, limits))


def _text_items(data: bytes, limits: Limits) -> Iterator[Record | LineError]:
    for number, raw in iter_lines(data):
        if number == 1 and raw[:3] == BOM:
            raw = raw[len(BOM) :]
        if not raw or not bytes(raw).strip():
            continue
        line = text_line(raw, number, limits)
        yield line if isinstance(line, LineError) else Record(number, line)
