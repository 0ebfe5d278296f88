"""Stored blobs: what `pack` writes now (zstd) and every tag it ever wrote read back."""

from __future__ import annotations

import threading
import zlib

import orjson

from traces.core.reading import blobs

VALUE = {"role": "user", "content": [{"type": "text", "text": "naïve ✓ words " * 60}]}


def test_a_large_value_is_one_zstd_frame_and_a_small_one_is_kept_raw():
    digest, stored = blobs.encode(VALUE)
    assert stored[:1] == b"s" and len(stored) < len(orjson.dumps(VALUE)) // 4
    assert blobs.decode(stored) == VALUE
    assert blobs.encode(["a"])[1] == b'r["a"]'
    assert digest == blobs.digested(VALUE)[0]


def test_blobs_stored_before_zstd_stay_readable():
    """Blobs are shared by digest and never rewritten: zlib's `z` (before issue 25) and
    raw `r` blobs read back as they always did, from bytes or a memoryview."""
    raw = orjson.dumps(VALUE)
    assert blobs.decode(b"z" + zlib.compress(raw, 6)) == VALUE
    assert blobs.decode(memoryview(b"z" + zlib.compress(raw, 6))) == VALUE
    assert blobs.unpack(b"r" + raw) == raw


def test_packing_in_threads_gives_each_the_same_bytes():
    """Each thread has its own zstd context; their answers are the one thread's."""
    values = [{"n": n, "text": f"line {n} " * 80} for n in range(40)]
    expected = [blobs.encode(value) for value in values]
    found: list[list[tuple[str, bytes]]] = []

    def work() -> None:
        found.append([blobs.encode(value) for value in values])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [expected] * 4
    assert [blobs.decode(stored) for _, stored in expected] == values
