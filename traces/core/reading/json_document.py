"""Read an upload that is one JSON document: an array of records, or one object.

A file that starts with `[` or `{` is either JSONL whose first line is a record, or one
JSON value spread over several lines; the first line decides. An array's items are the
records (numbered from 1); an object is one record its adapter unwraps.
"""

from __future__ import annotations

import re

from ..model import LineError
from .json_values import BOM, parse_line, too_many_values
from .limits import InputRejected, Limits
from .records import Record, Source, lines_in

_NON_SPACE = re.compile(rb"\S")


def whole_document(data: bytes, limits: Limits) -> Source | None:
    """A file that is one JSON value spread over several lines (or one array)."""
    first_newline = data.find(b"\n")
    if first_newline >= 0 and _NON_SPACE.search(data, first_newline) is not None:
        first = parse_line(data[:first_newline].rstrip(b"\r"), 1, limits)
        if not isinstance(first, LineError):
            return None  # the first line is a record on its own: this is JSONL
    body = data[len(BOM) :] if data.startswith(BOM) else data
    crowded = too_many_values(body, limits)
    if crowded:
        raise InputRejected(f"The JSON document {crowded}.")
    value = parse_line(body, 1, limits)
    if isinstance(value, LineError):
        return None
    lines_total = lines_in(data)
    if isinstance(value, list):
        if len(value) > limits.max_records:
            raise InputRejected(
                f"The JSON array holds {len(value):,} records; more than "
                f"{limits.max_records:,} are refused."
            )
        return Source("json", lines_total, [Record(i + 1, v) for i, v in enumerate(value)])
    return Source("json", lines_total, [Record(1, value)])
