"""cache-expired: a cache write paid because the gap outlived the cache lifetime."""

from __future__ import annotations

import pytest

from tests.core.rules.lint import lint
from tests.core.whatif.traces import clinic_visit

RULE = "cache-expired"
WROTE_THEN_READ = [(0, 4500, 0), (4500, 500, 0), (5000, 500, 0)]
WROTE_THEN_WROTE_AGAIN = [(0, 4500, 0), (4500, 500, 0), (0, 5500, 0)]
HOUR_WRITES = [(0, 4500, 4500), (4500, 500, 500), (0, 5500, 5500)]


def test_a_rewrite_after_more_than_five_minutes_fires():
    data = clinic_visit(gaps=(60.0, 301.0), cached=WROTE_THEN_WROTE_AGAIN)
    assert lint(data, RULE) == [
        (
            RULE,
            "info",
            3,
            None,
            "call 3 wrote 5,000 tokens to the prompt cache again 5 min 1 s after call 2 used"
            " it, longer than the 5-minute cache lifetime: the write cost $0.019, reading"
            " them would have cost $0.0015",
        )
    ]


def test_just_under_five_minutes_is_not_an_expiry():
    """Near miss: the same rewrite 299 s later cannot be the lifetime's doing."""
    data = clinic_visit(gaps=(60.0, 299.0), cached=WROTE_THEN_WROTE_AGAIN)
    assert lint(data, RULE) == []


def test_a_read_after_a_long_gap_is_not_flagged():
    """Near miss: the cache was still there (1-hour entries, or a keep-alive)."""
    data = clinic_visit(gaps=(60.0, 400.0), cached=WROTE_THEN_READ)
    assert lint(data, RULE) == []


@pytest.mark.parametrize("gap, fires", [(3599.0, False), (3601.0, True)])
def test_one_hour_writes_live_an_hour(gap, fires):
    data = clinic_visit(gaps=(60.0, gap), cached=HOUR_WRITES)
    found = lint(data, RULE)
    if not fires:
        assert found == []
        return
    assert found == [
        (
            RULE,
            "info",
            3,
            None,
            "call 3 wrote 5,000 tokens to the prompt cache again 1 h 0 min 1 s after call 2"
            " used it, longer than the 1-hour cache lifetime: the write cost $0.030, reading"
            " them would have cost $0.0015",
        )
    ]


def test_calls_without_timestamps_are_not_judged():
    data = clinic_visit(gaps=(60.0, 900.0), cached=WROTE_THEN_WROTE_AGAIN)
    data = data.replace(b'"started_at"', b'"started"').replace(b'"ended_at"', b'"ended"')
    assert lint(data, RULE) == []


def test_an_uncached_loop_is_not_flagged():
    assert lint(clinic_visit(gaps=(60.0, 900.0)), RULE) == []
