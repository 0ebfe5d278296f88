"""Turn uploaded bytes into numbered JSON records: JSONL lines, or the items of one document.

Every malformed line becomes a `LineError` with its 1-based line number; the rest is
still read. Compression (gzip) and whole-file documents (a JSON object or array, a VCR
YAML cassette) are unwrapped here so that adapters only ever see parsed records.
"""

from __future__ import annotations

import datetime
import io
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson

from .containers import MAX_MEMBERS, MemberError, _Budget, chunked_unsupported, eval_members
from .containers import member_bytes as zip_member_bytes
from .http_body import clean_headers, decode_body, jsonable
from .limits import DEFAULT_LIMITS, InputRejected, Limits
from .model import LineError

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Record:
    """One parsed JSON value and where it came from (1-based line or item number)."""

    line: int
    value: Any


INPUT_CHUNK = 64 * 1024
OUTPUT_CHUNK = 1024 * 1024


def decompress(data: bytes, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Undo gzip (possibly several members), refusing a bomb as soon as it shows.

    The input is fed a slice at a time and the output drained a MiB at a time, so the
    size limit and the decompression ratio (`Limits.max_decompression_ratio`, past the
    first `ratio_free_bytes`) are checked while inflating, not after.
    """
    if not data.startswith(GZIP_MAGIC):
        return data
    view = memoryview(data)
    out = io.BytesIO()
    offset = 0
    while data[offset : offset + 2] == GZIP_MAGIC:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        position = offset
        pending: bytes | memoryview = b""
        while not inflater.eof:
            if not pending:
                if position >= len(data):
                    raise InputRejected("The gzip stream is cut short: the file is incomplete.")
                pending = view[position : position + INPUT_CHUNK]
                position += len(pending)
            try:
                piece = inflater.decompress(pending, OUTPUT_CHUNK)
            except zlib.error as exc:
                raise InputRejected(f"The gzip stream is damaged ({exc}).") from None
            pending = inflater.unconsumed_tail
            out.write(piece)
            _check_size(out, position - len(pending), limits)
        offset = position - len(inflater.unused_data)
    return out.getvalue()


def _check_size(out: io.BytesIO, consumed: int, limits: Limits) -> None:
    size = out.tell()
    if size > limits.max_decompressed_bytes:
        raise InputRejected(
            f"The file decompresses to more than {limits.max_decompressed_bytes:,} bytes; "
            "refused as a possible decompression bomb."
        )
    ratio = limits.max_decompression_ratio
    if size > limits.ratio_free_bytes and size > ratio * max(consumed, 1):
        raise InputRejected(
            f"The file inflates more than {ratio} times ({consumed:,} compressed bytes "
            f"already gave {size:,}); refused as a possible decompression bomb."
        )


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


SERIALISABLE_DEPTH = 254


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
    lines: Sequence[bytes], first_line: int, limits: Limits = DEFAULT_LIMITS
) -> Iterator[Record | LineError]:
    """Records and LineErrors of lines numbered from `first_line` (a live batch, each line
    with or without its newline); blank lines (after a BOM or CR) count but yield nothing,
    as in an upload."""
    for number, line in enumerate(lines, start=first_line):
        raw = line.rstrip(b"\n").rstrip(b"\r")
        if raw.startswith(BOM):
            raw = raw[len(BOM) :]
        if not raw.strip():
            continue
        parsed = parse_line(raw, number, limits)
        yield parsed if isinstance(parsed, LineError) else Record(number, parsed)


@dataclass(slots=True)
class Source:
    """The records of one input and how it was read (`jsonl`, `json`, `yaml`).

    `items` is a list, except from `stream_source`, where JSONL records are parsed one at
    a time as they are consumed (a record is gone once the adapter has read it).
    """

    layout: str
    lines_total: int
    items: Any


def read_source(data: bytes, filename: str = "", limits: Limits = DEFAULT_LIMITS) -> Source:
    """Read a whole input: gzip, then JSONL, a JSON document or a VCR YAML cassette."""
    source = stream_source(data, filename, limits)
    if not isinstance(source.items, list):
        source.items = list(source.items)
    return source


def stream_source(data: bytes, filename: str = "", limits: Limits = DEFAULT_LIMITS) -> Source:
    """Like `read_source`, but JSONL lines are parsed lazily, as the items are iterated.

    Holding every parsed line of a 50 MB request log at once costs memory and, through
    the allocator, parse time; streaming keeps one line alive at a time.
    """
    if len(data) > limits.max_file_bytes:
        raise InputRejected(
            f"The file is {len(data):,} bytes; the limit is {limits.max_file_bytes:,}."
        )
    data = decompress(data, limits)
    if data.startswith(b"PK\x03\x04"):  # a ZIP archive: an Inspect AI .eval log
        return read_zip(data, limits)
    if not data or data.isspace():
        raise InputRejected("The file is empty: there is no trace in it.")
    text_start = _head(data)[:1]
    if _looks_like_yaml(data, filename):
        return _read_yaml(data, limits)
    if text_start in (b"[", b"{") or data.startswith(BOM):
        document = _whole_document(data, limits)
        if document is not None:
            return document
    return _read_jsonl(data, limits)


def _read_jsonl(data: bytes, limits: Limits) -> Source:
    lines_total = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if lines_total > limits.max_records:
        raise InputRejected(f"More than {limits.max_records:,} lines; refused.")
    return Source("jsonl", lines_total, _jsonl_items(data, limits))


def _jsonl_items(data: bytes, limits: Limits) -> Iterator[Record | LineError]:
    may_hold_nul = b"\x00" in data
    for number, raw in iter_lines(data):
        if not raw or (raw[0] in (0x20, 0x09) and not bytes(raw).strip()):
            continue
        parsed = parse_line(raw, number, limits, may_hold_nul)
        yield parsed if isinstance(parsed, LineError) else Record(number, parsed)


_NON_SPACE = re.compile(rb"\S")


def _whole_document(data: bytes, limits: Limits) -> Source | None:
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
    lines_total = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if isinstance(value, list):
        if len(value) > limits.max_records:
            raise InputRejected(
                f"The JSON array holds {len(value):,} records; more than "
                f"{limits.max_records:,} are refused."
            )
        return Source("json", lines_total, [Record(i + 1, v) for i, v in enumerate(value)])
    return Source("json", lines_total, [Record(1, value)])


def _looks_like_yaml(data: bytes, filename: str) -> bool:
    if filename.lower().endswith((".yaml", ".yml")):
        return True
    return _head(data)[:13] in (b"interactions:", b"version: 1\nin")


def _head(data: bytes) -> bytes:
    """The start of the text after leading white space, without copying a large file."""
    return data[:4096].lstrip()


@cache
def _no_alias_loader() -> type:
    """A safe YAML loader that also refuses aliases, so 'billion laughs' cannot expand.

    Built at the first YAML file: PyYAML is only imported when a cassette is read.
    """
    import yaml

    # PyYAML ships no type information (types-PyYAML is not a dependency): its loader
    # is Any to mypy, so subclassing it needs this one acknowledged exception.
    class NoAliasLoader(yaml.SafeLoader):  # type: ignore[misc]
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(
                    None, None, "YAML aliases are not accepted in traces", event.start_mark
                )
            return super().compose_node(parent, index)

    return NoAliasLoader


MAX_YAML_BYTES = 64 * 1024 * 1024
"""VCR cassettes are small; a larger YAML file would take minutes to read."""


def _read_yaml(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Source:
    """Read a VCR cassette: each interaction becomes one HTTP-pair record."""
    import yaml

    lines_total = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if len(data) > MAX_YAML_BYTES:
        raise InputRejected(
            f"The YAML file is {len(data):,} bytes; cassettes over {MAX_YAML_BYTES:,} "
            "bytes are refused (convert it to JSONL)."
        )
    try:
        _check_yaml_events(data, limits)
        document = yaml.load(data, Loader=_loader())
    except yaml.YAMLError as exc:
        raise InputRejected(f"Not readable YAML: {exc}") from exc
    except RecursionError:
        raise InputRejected("Not readable YAML: nested too deeply; refused.") from None
    if not isinstance(document, dict) or not isinstance(document.get("interactions"), list):
        if isinstance(document, list):  # a YAML list of records (e.g. SDK stream messages)
            return Source("yaml", lines_total, [Record(i + 1, v) for i, v in enumerate(document)])
        if isinstance(document, dict):  # one YAML document; its adapter unwraps it
            return Source("yaml", lines_total, [Record(1, document)])
        raise InputRejected("A YAML file must be a VCR cassette or a list/mapping of records.")
    items: list[Record | LineError] = []
    for number, interaction in enumerate(document["interactions"], start=1):
        try:
            pair = _bytes_as_text(vcr_interaction_to_pair(_json_value(interaction), limits))
        except _NotJson as exc:
            items.append(LineError(number, f"interaction holds {exc}, which JSON cannot hold"))
            continue
        if pair is None:
            items.append(LineError(number, "interaction has no request/response mapping"))
        else:
            items.append(Record(number, pair))
    return Source("yaml", lines_total, items)


@cache
def _loader() -> type:
    """libyaml's loader when PyYAML has it (aliases and depth are refused beforehand by
    `_check_yaml_events`), else the pure-Python one that refuses aliases itself."""
    import yaml

    return yaml.CSafeLoader if yaml.__with_libyaml__ else _no_alias_loader()


def _check_yaml_events(data: bytes, limits: Limits) -> None:
    """Refuse aliases and deep nesting from the event stream, before anything is built:
    the C loader composes recursively (no Python recursion limit protects it)."""
    import yaml

    depth = 0
    starts = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    for event in yaml.parse(data, Loader=_loader()):
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases are not accepted in traces", event.start_mark
            )
        if isinstance(event, starts):
            depth += 1
            if depth > limits.max_depth:
                raise InputRejected(
                    f"Not readable YAML: nested deeper than {limits.max_depth} levels; refused."
                )
        elif isinstance(event, ends):
            depth -= 1


class _NotJson(ValueError):
    """A YAML value with no JSON counterpart (a set, an odd key)."""


def _json_value(value: Any) -> Any:
    """The value with YAML's extra types made JSON: dates as ISO text, binary as text
    (bodies are decoded later); sets and other types raise `_NotJson`."""
    if isinstance(value, int) and not isinstance(value, bool):
        # orjson reads integers past 64 bits as floats; YAML keeps them exact
        return value if -(2**63) <= value < 2**64 else float(value)
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise _NotJson(f"a {type(key).__name__} key")
            out[key if isinstance(key, str) else str(key)] = _json_value(item)
        return out
    if isinstance(value, list):
        return [_json_value(item) for item in value]
    if isinstance(value, bytes):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    raise _NotJson(f"a YAML {type(value).__name__}")


def _bytes_as_text(value: Any) -> Any:
    """Binary values left outside the bodies (which are decoded on their own) as text."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {key: _bytes_as_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_bytes_as_text(item) for item in value]
    return value


def vcr_interaction_to_pair(
    interaction: Any, limits: Limits = DEFAULT_LIMITS
) -> dict[str, Any] | None:
    """Reshape one VCR interaction into the claude-trace HTTP-pair shape adapters read.

    Bodies are decoded by `http_body`: `parsed_body` structures, JSON strings, gzip or
    base64 `!!binary` bytes and AWS event streams all arrive as JSON (or event text).
    """
    if not isinstance(interaction, dict):
        return None
    request = interaction.get("request")
    response = interaction.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        return None
    request_headers = clean_headers(request.get("headers"))
    if "parsed_body" in request:
        request_body = jsonable(request["parsed_body"])
    else:
        request_body = request.get("body")
    pair_request = {
        "method": request.get("method"),
        "url": request.get("uri") or request.get("url"),
        "headers": request_headers,
        "body": decode_body(request_body, request.get("headers"), limits),
    }
    raw_headers = response.get("headers")
    if "parsed_body" in response:
        parsed = jsonable(response["parsed_body"])
    else:
        parsed = decode_body(response.get("body"), raw_headers, limits)
    status = response.get("status")
    pair_response: dict[str, Any] = {
        "status_code": status.get("code") if isinstance(status, dict) else status,
        "headers": clean_headers(raw_headers),
    }
    if isinstance(parsed, (dict, list)):
        pair_response["body"] = parsed
    else:
        pair_response["body"] = None
        pair_response["body_raw"] = parsed if isinstance(parsed, str) else None
    return {"request": pair_request, "response": pair_response, "recorded_by": "vcr"}


def read_zip(data: bytes, limits: Limits, max_members: int = MAX_MEMBERS) -> Source:
    """Records of an Inspect `.eval` archive: one `{"zip_member", "value"}` record per
    member `containers` chooses; a member that cannot be read is a `LineError`."""
    chosen, chunked = eval_members(data, max_members)
    items: list[Record | LineError] = []
    budget = _Budget(limits)
    for number, member in enumerate(chosen, start=1):
        try:
            payload = zip_member_bytes(data, member, budget, limits)
        except MemberError as exc:
            items.append(LineError(number, f"{member.name}: {exc}"))
            continue
        parsed = parse_line(payload, number, limits)
        if isinstance(parsed, LineError):
            items.append(LineError(number, f"{member.name}: {parsed.message}"))
        else:
            items.append(Record(number, {"zip_member": member.name, "value": parsed}))
    if chunked:
        items.append(LineError(len(chosen), chunked_unsupported(chunked)))
    return Source("zip", len(chosen), items)
