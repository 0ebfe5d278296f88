"""Property tests: no adapter raises on arbitrary bytes, cut lines or shuffled keys.

The only outcomes allowed are events (a rebuilt trace) or LineErrors, or one clear
InputRejected for the whole input.
"""

from __future__ import annotations

import contextlib
import random

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS
from traces.core.analysis.ingest import analyze_bytes
from traces.core.reading.formats.registry import adapters
from traces.core.reading.limits import InputRejected
from traces.core.reading.records import Record
from traces.core.reading.sample import sample_bytes

FORMATS = [adapter.name for adapter in adapters()]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def _analyze(data: bytes, format_name: str | None = None) -> None:
    # One clear message for the whole input is an allowed outcome.
    with contextlib.suppress(InputRejected):
        analyze_bytes(data, format_name=format_name)


def _seed_lines() -> list[bytes]:
    """Real lines of several formats to mutate: the sample, and corpus heads when present."""
    lines = sample_bytes().splitlines()
    for pattern in ("claude_code_jsonl/spotter/short.jsonl", "codex_rollout_jsonl/*.jsonl"):
        for path in sorted(CORPUS.glob(pattern))[:1]:
            lines.extend(path.read_bytes().splitlines()[:30])
    return lines


SEED_LINES = _seed_lines()


@SETTINGS
@given(data=st.binary(max_size=2048), format_name=st.sampled_from([None, *FORMATS]))
def test_arbitrary_bytes_never_crash(data, format_name):
    _analyze(data, format_name)


@SETTINGS
@given(
    picks=st.lists(st.integers(min_value=0, max_value=len(SEED_LINES) - 1), min_size=1, max_size=8),
    cut=st.integers(min_value=0, max_value=4000),
    format_name=st.sampled_from([None, *FORMATS]),
)
def test_cut_lines_never_crash(picks, cut, format_name):
    lines = [SEED_LINES[i] for i in picks]
    lines[-1] = lines[-1][: cut % (len(lines[-1]) + 1)]
    _analyze(b"\n".join(lines), format_name)


def _shuffle_keys(value, rng: random.Random):
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffle_keys(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffle_keys(v, rng) for v in value]
    return value


@SETTINGS
@given(seed=st.integers(), format_name=st.sampled_from([None, *FORMATS]))
def test_shuffled_keys_give_the_same_calls(seed, format_name):
    rng = random.Random(seed)
    original = sample_bytes()
    shuffled = b"\n".join(
        orjson.dumps(_shuffle_keys(orjson.loads(line), rng)) for line in original.splitlines()
    )
    _analyze(shuffled, format_name)
    if format_name is None:
        before = analyze_bytes(original)
        after = analyze_bytes(shuffled)
        assert [c.stop_reason for c in after.calls] == [c.stop_reason for c in before.calls]
        assert [(r.id, r.status) for r in after.tool_runs] == [
            (r.id, r.status) for r in before.tool_runs
        ]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=25,
)


@SETTINGS
@given(values=st.lists(json_values, min_size=1, max_size=5))
def test_every_adapter_takes_any_json_record(values):
    """Fed straight to each adapter, odd JSON yields events or LineErrors, never raises."""
    for adapter_class in adapters():
        adapter = adapter_class("property.jsonl")
        for line, value in enumerate(values, start=1):
            list(adapter.feed(Record(line, value)))
        list(adapter.close())
