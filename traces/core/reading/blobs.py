"""Content addressing: JSON values become (digest, compressed bytes) stored once each.

Request logs re-send the whole transcript on every call; storing each message, system
prompt and tool list by the hash of its bytes makes storage grow with unique content.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Any

import orjson

COMPRESS_ABOVE = 256


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
        return b"z" + zlib.compress(raw, 6)
    return b"r" + raw


def unpack(stored: bytes) -> bytes:
    stored = bytes(stored)
    if stored[:1] == b"z":
        return zlib.decompress(stored[1:])
    return stored[1:]


def decode(stored: bytes) -> Any:
    return orjson.loads(unpack(stored))
