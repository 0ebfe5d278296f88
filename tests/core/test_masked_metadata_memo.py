"""A rebuild masks each call's metadata through a memo of the texts it already masked (a
session id comes back at every call): what comes out is what masking each call alone
gives, a secret is masked at every call it comes back in, and the memo is bounded."""

from __future__ import annotations

import orjson

from tests.core.long_session import make_session
from traces.core.analysis.ingest import analyze_bytes
from traces.core.reading.credentials import MEMO_TEXT_CHARS, MEMO_TEXTS, mask_secrets

KEY = "sk-" + "A1b2C3d4E5f6G7h8I9j0" * 2


def test_a_memo_gives_what_masking_alone_gives_and_masks_a_repeated_secret_each_time():
    memo: dict[str, str] = {}
    values = [
        {"session": "5c290a37-6a97-ad18-f174-1ae594ad393d", "note": f"key {KEY}"},
        {"session": "5c290a37-6a97-ad18-f174-1ae594ad393d", "note": f"key {KEY}"},
        {"url": "https://x.example/v1?api_key=s3cr3tvalue&n=2", "list": [f"{KEY}", "plain"]},
        {"url": "https://x.example/v1?api_key=s3cr3tvalue&n=2", "list": [f"{KEY}", "plain"]},
    ]
    for value in values:
        masked = mask_secrets(value, memo=memo)
        assert masked == mask_secrets(value)
        assert KEY not in orjson.dumps(masked).decode()
        assert "s3cr3tvalue" not in orjson.dumps(masked).decode()
    assert f"key {KEY}" in memo  # the memo was used: the repeat came from it
    assert memo[f"key {KEY}"] == mask_secrets(f"key {KEY}")


def test_the_memo_keeps_short_texts_only_and_at_most_its_bound():
    memo: dict[str, str] = {}
    long_text = "x" * (MEMO_TEXT_CHARS + 1)
    mask_secrets({"a": long_text}, memo=memo)
    assert memo == {}
    mask_secrets([f"id-{n}" for n in range(MEMO_TEXTS + 10)], memo=memo)
    assert len(memo) == MEMO_TEXTS


def test_every_call_of_a_session_is_masked_as_on_its_own():
    """The real rebuild: a key in the session's metadata is masked at every call."""
    lines = make_session(30).splitlines()
    records = [orjson.loads(line) for line in lines]
    for record in records:
        record["sessionId"] = f"session {KEY}"
    trace = analyze_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n")
    assert len(trace.calls) == 30
    for call in trace.calls:
        assert call.extra == mask_secrets(dict(call.extra))
        assert KEY not in orjson.dumps(dict(call.extra)).decode()
        assert "[masked]" in call.extra["session_id"]
