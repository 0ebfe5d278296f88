"""Content addressing: JSON values become (digest, compressed bytes) stored once each.

Request logs re-send the whole transcript on every call; storing each message, system
prompt and tool list by the hash of its bytes makes storage grow with unique content.

A stored blob is one tag byte, then its bytes: `r` raw, `s` one zstd frame (what `pack`
writes), `z` zlib (what it wrote before issue 25; such blobs stay readable forever, as
blobs are shared by digest and never rewritten). zstd at level 3 stores a long session's
96,000 blobs in the same bytes as zlib at level 6 (within 2%) in a third of the CPU time
(0.5 s against 1.5 s, bench/stored_size.py's session), and reads them back faster too.
"""

from __future__ import annotations

import hashlib
import threading
import zlib
from typing import Any

import orjson
import zstandard

COMPRESS_ABOVE = 256
ZSTD_LEVEL = 3

_local = threading.local()
"""One zstd compressor and decompressor per thread: their contexts are reused (making
one is most of the cost of packing a small blob) but must not be shared across threads."""


def encode(value: Any) -> tuple[str, bytes]:
    """(digest, stored bytes) of a JSON value. Small values are stored uncompressed."""
    digest, raw = digested(value)
    return digest, pack(raw)


def digested(value: Any) -> tuple[str, bytes]:
    """(digest, uncompressed bytes) of a JSON value: a writer that already holds the digest
    compresses nothing (`pack` is most of `encode`'s cost, and a quarter of a long trace's
    values repeat one already seen)."""
    raw = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    return hashlib.blake2b(raw, digest_size=20).hexdigest(), raw


def pack(raw: bytes) -> bytes:
    if len(raw) > COMPRESS_ABOVE:
        return b"s" + _compressor().compress(raw)
    return b"r" + raw


def unpack(stored: bytes) -> bytes:
    stored = bytes(stored)
    tag = stored[:1]
    if tag == b"s":
        return _decompressor().decompress(stored[1:])
    if tag == b"z":
        return zlib.decompress(stored[1:])
    return stored[1:]


def decode(stored: bytes) -> Any:
    return orjson.loads(unpack(stored))


def pack_text(text: str) -> bytes:
    """Text stored as a blob is (content search's copy of a call's text, issue 25)."""
    return pack(text.encode("utf-8"))


def unpack_text(stored: bytes) -> str:
    return unpack(stored).decode("utf-8")


def _compressor() -> zstandard.ZstdCompressor:
    compressor = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = _local.compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    return compressor


def _decompressor() -> zstandard.ZstdDecompressor:
    decompressor = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = _local.decompressor = zstandard.ZstdDecompressor()
    return decompressor
