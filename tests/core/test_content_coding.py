"""Content-Encoding undone within a cap: what the proxy records and the OTLP receiver
reads, and what a hostile body cannot make them allocate."""

from __future__ import annotations

import gzip
import time
import zlib

import pytest
import zstandard

from traces.core.reading.content_coding import ContentCodingError, decoded

BODY = b'{"model":"gpt-5","input":[{"role":"user","content":"hello"}]}' * 200


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("", BODY),
        ("identity", BODY),
        ("gzip", gzip.compress(BODY)),
        ("x-gzip", gzip.compress(BODY)),
        ("deflate", zlib.compress(BODY)),
        ("deflate", raw_deflate(BODY)),  # no zlib wrapper, as some servers send it
        ("zstd", zstandard.ZstdCompressor(level=3).compress(BODY)),  # the Codex CLI's
        ("ZSTD", zstandard.ZstdCompressor(write_content_size=False).compress(BODY)),
        ("gzip, zstd", zstandard.ZstdCompressor().compress(gzip.compress(BODY))),
    ],
)
def test_each_coding_is_undone(encoding, body):
    assert decoded(body, encoding, len(BODY)) == BODY


@pytest.mark.parametrize(
    ("encoding", "body", "problem"),
    [
        ("br", b"\x1b\x00", "unsupported"),
        ("gzip", b"not gzip at all", "damaged"),
        ("gzip", gzip.compress(BODY)[:40], "damaged"),
        ("zstd", zstandard.ZstdCompressor().compress(BODY)[:30], "damaged"),
        ("zstd", b"", "damaged"),
        ("zstd", b"\x00" * 16, "damaged"),
        ("zstd", zstandard.ZstdCompressor().compress(BODY), "too_large"),
        ("gzip", gzip.compress(BODY), "too_large"),
    ],
)
def test_what_cannot_be_decoded_says_why(encoding, body, problem):
    with pytest.raises(ContentCodingError) as caught:
        decoded(body, encoding, len(BODY) - 1)
    assert caught.value.problem == problem
    assert str(caught.value)


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["zstd", "gzip"])
def test_a_bomb_stops_at_the_cap(encoding):
    """Half a GiB of zeros in a few hundred kB: refused at the 32 MiB cap in well under
    a second, never inflated whole."""
    zeros = b"\x00" * (512 * 1024 * 1024)
    bomb = (
        zstandard.ZstdCompressor(level=19).compress(zeros)
        if encoding == "zstd"
        else gzip.compress(zeros, compresslevel=9)
    )
    del zeros
    started = time.perf_counter()
    with pytest.raises(ContentCodingError) as caught:
        decoded(bomb, encoding, 32 * 1024 * 1024)
    assert caught.value.problem == "too_large"
    assert time.perf_counter() - started < 2.0
