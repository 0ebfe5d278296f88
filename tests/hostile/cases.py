"""The hostile-input table: each case is a file, and what Loop Inspector must answer.

`refused` cases get a 400 whose message holds `says`, and nothing is stored; `stored`
cases are ingested (the original kept byte-identical) and their line errors hold `says`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tests.hostile import inputs


@dataclass(frozen=True)
class Case:
    id: str
    data: bytes
    outcome: str  # "refused" or "stored"
    says: str
    filename: str = "trace.jsonl"


@cache
def cases() -> list[Case]:
    return [
        Case(
            "nul-everywhere",
            inputs.with_text(inputs.NUL, model="claude\x00x", name="read\x00file"),
            "stored",
            "",
        ),
        Case("usage-2^63", inputs.usage_trace(input_tokens=2**63), "stored", "out of range"),
        Case("usage-2^64-1", inputs.usage_trace(output_tokens=2**64 - 1), "stored", "out of range"),
        Case(
            "usage-negative",
            inputs.usage_trace(cache_read_input_tokens=-5),
            "stored",
            "out of range",
        ),
        Case("http-status-negative", inputs.http_status_trace(-1), "stored", "not a status code"),
        Case("http-status-2^31", inputs.http_status_trace(2**31), "stored", "not a status code"),
        Case("yaml-deep", inputs.deep_yaml(), "refused", "nest", "cassette.yaml"),
        Case("yaml-set", inputs.SET_YAML, "refused", "JSON cannot hold", "cassette.yaml"),
        Case("gzip-array-199k", inputs.gzip_array(), "refused", "decompression bomb", "t.json.gz"),
        Case("gzip-bomb", inputs.gzip_bomb(), "refused", "decompression bomb", "t.jsonl.gz"),
        Case("array-3M-objects", inputs.many_dicts(), "refused", "JSON values"),
        Case(
            "lone-surrogate-escape", b'{"request": {"model": "\\ud800"}}\n', "refused", "surrogate"
        ),
        Case("deep-json-line", b"[" * 100_000 + b"]" * 100_000 + b"\n", "refused", "nested"),
    ]


def by_id() -> dict[str, Case]:
    return {case.id: case for case in cases()}
