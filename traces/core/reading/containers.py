"""Read ZIP containers safely; today that means Inspect AI `.eval` logs.

An `.eval` log is a ZIP archive (see `inspect_ai/log/_recorders/eval.py` and Inspect issue
#4553): `header.json` (version, status, eval spec, plan, results, stats), one
`samples/<id>_epoch_<n>.json` per sample, plus `summaries.json`, `reductions.json` and a
`_journal/` (`start.json`, `summaries/<n>.json`) that repeat what the header and samples
hold. Older archives have `start.json` + `results.json` instead of `header.json`; an
eval still running has only `_journal/start.json`. Members are deflated (method 8) or,
since 2026, Zstandard-compressed (method 93), which Python's `zipfile` reads only from
3.14 on, so this module reads the central directory and the members itself.

`sources.read_zip` makes each chosen member one record `{"zip_member": <name>, "value":
<parsed JSON>}`: the header first, then the samples in (id, epoch) order, so an adapter
knows the log's version and status before it reads a sample. Summaries, reductions and
the journal add nothing a trace needs and are not read.

Hostile archives are refused with `InputRejected` before they can exhaust the server:
the number of members is capped before the directory is walked, and every member's
declared and actual size is capped, as is their sum (`Limits.max_decompressed_bytes`),
while it is inflated in chunks. A member that cannot be read (unknown compression,
encryption, bad checksum) becomes a `LineError`; the rest of the archive is still read.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator

from traces.core.patterns import lazy_compile
from traces.core.records import dataclass

from .limits import InputRejected, Limits

ZIP_MAGIC = b"PK\x03\x04"
MAX_MEMBERS = 100_000
"""More members than any real eval log holds (one per sample and epoch, plus a few)."""
CHUNK_BYTES = 1 << 20

_EOCD = b"PK\x05\x06"
_EOCD64 = b"PK\x06\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_CENTRAL = b"PK\x01\x02"
_EOCD_FORMAT = "<4sHHHHIIH"
_EOCD64_FORMAT = "<4sQHHIIQQQQ"
_LOCATOR_FORMAT = "<4sIQI"
_CENTRAL_FORMAT = "<4sHHHHHHIIIHHHHHII"
_LOCAL_FORMAT = "<4sHHHHHIIIHH"
_ZIP64_EXTRA = 0x0001
_STORED, _DEFLATED, _ZSTANDARD = 0, 8, 93
_METHOD_NAMES = {9: "Deflate64", 12: "bzip2", 14: "LZMA", 95: "xz", 99: "AES encryption"}

HEADER_MEMBERS = ("header.json", "_journal/start.json", "start.json", "results.json")
SAMPLE_MEMBER = lazy_compile(r"^samples/(?P<id>[^/]+)_epoch_(?P<epoch>\d+)\.json$")
CHUNKED_SAMPLE = lazy_compile(r"^samples/[^/]+_epoch_\d+/sample\.json$")


@dataclass(frozen=True, slots=True)
class Member:
    """One central-directory entry: where a member's bytes are and what they claim."""

    name: str
    method: int
    flags: int
    crc: int
    compressed_size: int
    size: int
    local_offset: int


class MemberError(ValueError):
    """One member cannot be read; the rest of the archive can."""


def eval_members(data: bytes, max_members: int = MAX_MEMBERS) -> tuple[list[Member], str | None]:
    """The members an Inspect `.eval` log is read from, in reading order (see the module
    docstring), and the name of a chunked-layout sample when the archive has one.

    Raises `InputRejected` when the archive holds no Inspect log at all.
    """
    members = {member.name: member for member in central_directory(data, max_members)}
    chosen = _choose(members)
    chunked = next((name for name in members if CHUNKED_SAMPLE.match(name)), None)
    if not chosen:
        raise InputRejected(
            chunked_unsupported(chunked)
            if chunked
            else "The ZIP archive holds no Inspect AI log (no header.json and no "
            "samples/<id>_epoch_<n>.json); only Inspect .eval archives are read."
        )
    return chosen, chunked


def chunked_unsupported(name: str) -> str:
    """Why a sample in the chunked '.eval2' layout is not read."""
    return (
        f"{name}: the chunked '.eval2' sample layout is not supported; convert the "
        "log with `inspect log convert --to eval`"
    )


def _choose(members: dict[str, Member]) -> list[Member]:
    """The header (or what stands in for it), then the samples in (id, epoch) order."""
    if "header.json" in members:
        headers = [members["header.json"]]
    else:
        headers = [members[name] for name in HEADER_MEMBERS[1:] if name in members]
    samples = [member for name, member in members.items() if SAMPLE_MEMBER.match(name)]
    samples.sort(key=_sample_order)
    return headers + samples


def _sample_order(member: Member) -> tuple[int, int | str, int]:
    match = SAMPLE_MEMBER.match(member.name)
    assert match is not None  # only sample members are sorted
    sample_id, epoch = match.group("id"), int(match.group("epoch"))
    if sample_id.isdigit():
        return (0, int(sample_id), epoch)
    return (1, sample_id, epoch)


# -- the central directory ---------------------------------------------------------------
def central_directory(data: bytes, max_members: int = MAX_MEMBERS) -> Iterator[Member]:
    """The archive's entries, refusing a directory that claims too many of them."""
    count, size, offset = _directory_extent(data)
    if count > max_members:
        raise InputRejected(
            f"The ZIP archive lists {count:,} members; more than {max_members:,} are "
            "refused as a possible decompression bomb."
        )
    if offset + size > len(data):
        raise InputRejected("The ZIP archive is cut short: its directory lies past its end.")
    position = offset
    for _ in range(count):
        member, position = _central_entry(data, position)
        yield member


def _directory_extent(data: bytes) -> tuple[int, int, int]:
    """(entries, size, offset) of the central directory, from the end records."""
    start = data.rfind(_EOCD, max(0, len(data) - 22 - 0xFFFF))
    if start < 0 or start + 22 > len(data):
        raise InputRejected("Not a readable ZIP archive: its end-of-directory record is missing.")
    fields = struct.unpack_from(_EOCD_FORMAT, data, start)
    count, size, offset = fields[4], fields[5], fields[6]
    if count != 0xFFFF and 0xFFFFFFFF not in (size, offset):
        return count, size, offset
    locator = start - struct.calcsize(_LOCATOR_FORMAT)
    if locator < 0 or data[locator : locator + 4] != _EOCD64_LOCATOR:
        return count, size, offset
    zip64_at = struct.unpack_from(_LOCATOR_FORMAT, data, locator)[2]
    if zip64_at + struct.calcsize(_EOCD64_FORMAT) > len(data):
        raise InputRejected("Not a readable ZIP archive: its ZIP64 directory record is missing.")
    record = struct.unpack_from(_EOCD64_FORMAT, data, zip64_at)
    if record[0] != _EOCD64:
        raise InputRejected("Not a readable ZIP archive: its ZIP64 directory record is damaged.")
    return record[7], record[8], record[9]


def _central_entry(data: bytes, position: int) -> tuple[Member, int]:
    fixed = struct.calcsize(_CENTRAL_FORMAT)
    if position + fixed > len(data):
        raise InputRejected("Not a readable ZIP archive: its directory is cut short.")
    fields = struct.unpack_from(_CENTRAL_FORMAT, data, position)
    if fields[0] != _CENTRAL:
        raise InputRejected("Not a readable ZIP archive: its directory is damaged.")
    flags, method, crc = fields[3], fields[4], fields[7]
    compressed, size, offset = fields[8], fields[9], fields[16]
    name_len, extra_len, comment_len = fields[10], fields[11], fields[12]
    name_at = position + fixed
    raw_name = data[name_at : name_at + name_len]
    name = raw_name.decode("utf-8" if flags & 0x800 else "cp437", "replace")
    extra = data[name_at + name_len : name_at + name_len + extra_len]
    size, compressed, offset = _zip64_sizes(extra, size, compressed, offset)
    member = Member(name, method, flags, crc, compressed, size, offset)
    return member, name_at + name_len + extra_len + comment_len


def _zip64_sizes(extra: bytes, size: int, compressed: int, offset: int) -> tuple[int, int, int]:
    """Sizes and offset that overflowed 32 bits live in the ZIP64 extra field, in order."""
    if 0xFFFFFFFF not in (size, compressed, offset):
        return size, compressed, offset
    position = 0
    while position + 4 <= len(extra):
        header_id, length = struct.unpack_from("<HH", extra, position)
        body = extra[position + 4 : position + 4 + length]
        position += 4 + length
        if header_id != _ZIP64_EXTRA:
            continue
        values = [struct.unpack_from("<Q", body, i)[0] for i in range(0, len(body) - 7, 8)]
        if size == 0xFFFFFFFF and values:
            size = values.pop(0)
        if compressed == 0xFFFFFFFF and values:
            compressed = values.pop(0)
        if offset == 0xFFFFFFFF and values:
            offset = values.pop(0)
    return size, compressed, offset


# -- member contents ---------------------------------------------------------------------
@dataclass(slots=True)
class _Budget:
    """Decompressed bytes left for the whole archive, the archives inside it included:
    one budget for every nesting level (issue 26: each nested ZIP had its own 2 GiB, so a
    3.5 MB upload raised the server's memory by 3.85 GB). With `source_bytes`, what all
    levels inflate to is also held to the decompression ratio of the outermost file."""

    limits: Limits
    source_bytes: int = 0
    used: int = 0

    def spend(self, amount: int) -> None:
        self.used += amount
        limits = self.limits
        if self.used > limits.max_decompressed_bytes:
            raise InputRejected(
                "The ZIP archive decompresses to more than "
                f"{limits.max_decompressed_bytes:,} bytes; refused as a possible "
                "decompression bomb."
            )
        ratio = limits.max_decompression_ratio
        if self.source_bytes and self.used > max(
            limits.ratio_free_bytes, ratio * self.source_bytes
        ):
            raise InputRejected(
                f"The ZIP archive and the archives inside it inflate more than {ratio} times "
                f"its {self.source_bytes:,} bytes; refused as a possible decompression bomb."
            )


def member_bytes(data: bytes, member: Member, budget: _Budget, limits: Limits) -> bytes:
    """A member's contents, inflated in chunks and stopped at the first limit it crosses."""
    cap = limits.max_line_bytes
    if member.size > cap:
        raise InputRejected(
            f"The ZIP member {member.name} declares {member.size:,} bytes, over the "
            f"{cap:,} allowed for one record; refused as a possible decompression bomb."
        )
    if member.flags & 0x1:
        raise MemberError("the member is encrypted")
    raw = _compressed_bytes(data, member)
    if member.method == _STORED:
        chunks: Iterator[bytes] = iter([raw])
    elif member.method == _DEFLATED:
        chunks = _inflate(raw)
    elif member.method == _ZSTANDARD:
        chunks = _unzstd(raw)
    else:
        method = _METHOD_NAMES.get(member.method, f"method {member.method}")
        raise MemberError(f"compressed with {method}, which cannot be read here")
    out = io.BytesIO()
    try:
        for chunk in chunks:
            out.write(chunk)
            budget.spend(len(chunk))
            _check_ratio(member, out.tell(), len(raw), limits)
            if out.tell() > member.size:
                raise InputRejected(
                    f"The ZIP member {member.name} inflates past the {member.size:,} bytes "
                    "it declares; refused as a possible decompression bomb."
                )
    except (zlib.error, _ZstdDamaged) as exc:
        raise MemberError(f"the compressed data is damaged ({exc})") from None
    payload = out.getvalue()
    if len(payload) != member.size:
        raise MemberError(f"holds {len(payload):,} bytes, not the {member.size:,} it declares")
    if zlib.crc32(payload) != member.crc:
        raise MemberError("its checksum does not match (the archive is damaged)")
    return payload


def _check_ratio(member: Member, inflated: int, compressed: int, limits: Limits) -> None:
    ratio = limits.max_decompression_ratio
    if inflated > limits.ratio_free_bytes and inflated > ratio * max(compressed, 1):
        raise InputRejected(
            f"The ZIP member {member.name} inflates more than {ratio} times its "
            f"{compressed:,} compressed bytes; refused as a possible decompression bomb."
        )


def _compressed_bytes(data: bytes, member: Member) -> bytes:
    fixed = struct.calcsize(_LOCAL_FORMAT)
    at = member.local_offset
    if at + fixed > len(data) or data[at : at + 4] != ZIP_MAGIC:
        raise MemberError("its local header is missing (the archive is damaged)")
    fields = struct.unpack_from(_LOCAL_FORMAT, data, at)
    start = at + fixed + fields[9] + fields[10]
    end = start + member.compressed_size
    if end > len(data):
        raise MemberError("its data runs past the end of the archive (the file is cut short)")
    return data[start:end]


def _inflate(raw: bytes) -> Iterator[bytes]:
    """Raw deflate, never producing more than one chunk per step."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    pending = raw
    while not inflater.eof:
        chunk = inflater.decompress(pending, CHUNK_BYTES)
        pending = inflater.unconsumed_tail
        if chunk:
            yield chunk
        elif not pending:
            raise zlib.error("the deflate stream is cut short")


class _ZstdDamaged(Exception):
    """zstandard's `ZstdError`, raised as ours so that catching it needs no import of
    zstandard (see `_unzstd`)."""


def _unzstd(raw: bytes) -> Iterator[bytes]:
    """Zstandard frames (method 93), read in bounded chunks. zstandard is imported here,
    by the one member kind that needs it: every file read goes through this module, and
    importing zstandard is work a report of a plain log has no use for."""
    import zstandard

    try:
        decompressor = zstandard.ZstdDecompressor(max_window_size=1 << 27)
        with decompressor.stream_reader(io.BytesIO(raw), read_across_frames=True) as reader:
            while True:
                chunk = reader.read(CHUNK_BYTES)
                if not chunk:
                    return
                yield chunk
    except zstandard.ZstdError as exc:
        raise _ZstdDamaged(str(exc)) from None
