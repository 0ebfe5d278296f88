"""Keep the uploaded file byte-identical at a fraction of its size.

zstd's long-distance matching finds the transcript a request log repeats on every line
even megabytes apart, which a 32 KB zlib window cannot.
"""

from __future__ import annotations

import zstandard

WINDOW_LOG = 27  # 128 MiB: reaches back across a whole long loop
_PARAMS = zstandard.ZstdCompressionParameters.from_level(
    3, enable_ldm=True, window_log=WINDOW_LOG, threads=0
)


def compress(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(compression_params=_PARAMS).compress(data)


def decompress(stored: bytes) -> bytes:
    reader = zstandard.ZstdDecompressor(max_window_size=1 << WINDOW_LOG)
    return reader.decompressobj().decompress(bytes(stored))
