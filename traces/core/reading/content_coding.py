"""Undo an HTTP Content-Encoding on a body, within a size limit.

The Codex CLI zstd-compresses its Responses request bodies (`Content-Encoding: zstd`);
other clients and servers use gzip or deflate, and OpenTelemetry exporters gzip their
exports. The recording proxy forwards such a body unchanged and decodes its own copy
here, so the recorded line holds the JSON the adapters read; the OTLP receiver decodes
exports here too. Each decoder is capped at `max_bytes` of output while it runs: a
decompression bomb stops there, it never gets to allocate the rest.
"""

from __future__ import annotations

import io
import zlib
from typing import Literal

Problem = Literal["unsupported", "damaged", "too_large"]

SUPPORTED = ("gzip", "x-gzip", "deflate", "zstd", "identity")


class ContentCodingError(ValueError):
    """The body cannot be decoded: why, as a sentence, and which kind of problem."""

    def __init__(self, message: str, problem: Problem) -> None:
        super().__init__(message)
        self.problem: Problem = problem


def decoded(body: bytes, content_encoding: str, max_bytes: int) -> bytes:
    """`body` with its codings undone (the last one applied first, as RFC 9110 lists them).

    Raises ContentCodingError: a coding not in SUPPORTED, a damaged or cut-short stream,
    or more than `max_bytes` once decoded."""
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    data = body
    for coding in reversed(codings):
        data = _undo(coding, data, max_bytes)
    return data


def _undo(coding: str, data: bytes, max_bytes: int) -> bytes:
    if coding == "identity":
        return data
    if coding in ("gzip", "x-gzip"):
        return _inflate(data, 16 + zlib.MAX_WBITS, max_bytes, "gzip")
    if coding == "deflate":
        try:
            return _inflate(data, zlib.MAX_WBITS, max_bytes, "deflate")
        except ContentCodingError as exc:
            if exc.problem != "damaged":
                raise
            # Some servers send raw deflate, without the zlib wrapper RFC 9110 asks for.
            return _inflate(data, -zlib.MAX_WBITS, max_bytes, "deflate")
    if coding == "zstd":
        return _unzstd(data, max_bytes)
    raise ContentCodingError(
        f"Content-Encoding {coding!r} is not supported (only {', '.join(SUPPORTED)}).",
        "unsupported",
    )


def _inflate(data: bytes, wbits: int, max_bytes: int, name: str) -> bytes:
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise ContentCodingError(f"The body is not valid {name} ({exc}).", "damaged") from None
    if len(out) > max_bytes or inflater.unconsumed_tail:
        raise _too_large(max_bytes)
    if not inflater.eof:
        raise ContentCodingError(f"The {name} body is cut short.", "damaged")
    return out


ZSTD_SLICE = 1024
"""Compressed bytes fed to zstd at a time: a slice expands to at most ~32 MiB (zstd's
worst ratio), so the output is checked against the cap between slices."""


def _unzstd(data: bytes, max_bytes: int) -> bytes:
    # Imported here: only a zstd body needs it, and a short command reading a plain
    # log (a 200-call `report`) has no use for the import.
    import zstandard

    decoder = zstandard.ZstdDecompressor().decompressobj()
    out = io.BytesIO()
    view = memoryview(data)
    try:
        for start in range(0, len(data), ZSTD_SLICE):
            out.write(decoder.decompress(view[start : start + ZSTD_SLICE]))
            if out.tell() > max_bytes:
                raise _too_large(max_bytes)
            if decoder.eof:
                break
    except zstandard.ZstdError as exc:
        raise ContentCodingError(f"The body is not valid zstd ({exc}).", "damaged") from None
    if not decoder.eof:
        raise ContentCodingError("The zstd body is cut short.", "damaged")
    return out.getvalue()


def _too_large(max_bytes: int) -> ContentCodingError:
    return ContentCodingError(f"The body passes {max_bytes:,} bytes once decoded.", "too_large")
