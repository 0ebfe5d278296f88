"""Undo gzip on an upload, refusing a decompression bomb as soon as it shows.

Uploads (and stored originals) may be gzip files, possibly of several members. The size
and ratio limits (`Limits`) are checked while inflating, a slice at a time, so a small
hostile file cannot make the server allocate gigabytes first.
"""

from __future__ import annotations

import io
import zlib

from .limits import DEFAULT_LIMITS, InputRejected, Limits

GZIP_MAGIC = b"\x1f\x8b"
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
