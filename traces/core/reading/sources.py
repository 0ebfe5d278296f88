"""Turn uploaded bytes into numbered records: choose how the upload is laid out, read it.

An upload is gzip-unwrapped first (`decompress`), then read as what it is: an Inspect
`.eval` ZIP archive (`containers`), a VCR or other YAML file (`cassettes`), one JSON
document (`json_document`), JSONL (`records`), or text lines (`records.read_text`).
Adapters only ever see parsed records.

Text: a file that is none of the others, does not start with `{` or `[`, and whose first
non-blank lines a text format (`Adapter.reads_text`, e.g. aider's Markdown chat history)
claims with its `sniff` is read as one `str` record per line. Any other file is read as
JSONL, so a broken JSONL file still gets each bad line reported; detection then sees the
same first lines as the text format did, so the two choices agree.
"""

from __future__ import annotations

from ..model import LineError
from .cassettes import read_yaml
from .containers import (
    MAX_MEMBERS,
    ZIP_MAGIC,
    MemberError,
    _Budget,
    chunked_unsupported,
    eval_members,
)
from .containers import member_bytes as zip_member_bytes
from .decompress import decompress
from .formats.detect import SNIFF_RECORDS
from .formats.registry import adapters
from .json_document import whole_document
from .json_values import BOM, parse_line
from .limits import DEFAULT_LIMITS, InputRejected, Limits
from .records import Record, Source, read_jsonl, read_text, text_head


def read_source(data: bytes, filename: str = "", limits: Limits = DEFAULT_LIMITS) -> Source:
    """Read a whole input: gzip, then JSONL, a JSON document or a VCR YAML cassette."""
    source = stream_source(data, filename, limits)
    if not isinstance(source.items, list):
        source.items = list(source.items)
    return source


def stream_source(
    data: bytes, filename: str = "", limits: Limits = DEFAULT_LIMITS, text: bool = False
) -> Source:
    """Like `read_source`, but JSONL lines are parsed lazily, as the items are iterated.

    Holding every parsed line of a 50 MB request log at once costs memory and, through
    the allocator, parse time; streaming keeps one line alive at a time. `text`: read it
    as text lines whatever it looks like (a mapping with a line pattern says so).
    """
    if len(data) > limits.max_file_bytes:
        raise InputRejected(
            f"The file is {len(data):,} bytes; the limit is {limits.max_file_bytes:,}."
        )
    data = decompress(data, limits)
    if data.startswith(ZIP_MAGIC):  # a ZIP archive: an Inspect AI .eval log
        return read_zip(data, limits)
    if not data or data.isspace():
        raise InputRejected("The file is empty: there is no trace in it.")
    if text:
        return read_text(data, limits)
    text_start = _head(data)[:1]
    if _looks_like_yaml(data, filename):
        return read_yaml(data, limits)
    if text_start in (b"[", b"{") or data.startswith(BOM):
        document = whole_document(data, limits)
        if document is not None:
            return document
    if text_start not in (b"[", b"{") and _text_format_claims(data):
        return read_text(data, limits)
    return read_jsonl(data, limits)


def _text_format_claims(data: bytes) -> bool:
    """Whether a text format claims the file's first non-blank lines."""
    head = text_head(data, SNIFF_RECORDS)
    for adapter in adapters():
        if not adapter.reads_text:
            continue
        try:
            if adapter.sniff(head) is not None:
                return True
        except Exception:  # a sniffer must never sink the upload (as in `detect`)
            continue
    return False


def _looks_like_yaml(data: bytes, filename: str) -> bool:
    if filename.lower().endswith((".yaml", ".yml")):
        return True
    return _head(data)[:13] in (b"interactions:", b"version: 1\nin")


def _head(data: bytes) -> bytes:
    """The start of the text after leading white space, without copying a large file."""
    return data[:4096].lstrip()


def read_zip(data: bytes, limits: Limits, max_members: int = MAX_MEMBERS) -> Source:
    """Records of an Inspect `.eval` archive: one `{"zip_member", "value"}` record per
    member `containers` chooses; a member that cannot be read is a `LineError`."""
    chosen, chunked = eval_members(data, max_members)
    items: list[Record | LineError] = []
    budget = _Budget(limits, source_bytes=len(data))
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
