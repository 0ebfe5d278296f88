"""The usage periods' time zones: the offset pieces the database buckets days with agree,
hour by hour, with the zone itself, across daylight-saving changes."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from traces.core.outputs.usage_periods import (
    DAY,
    UsageError,
    day_period,
    local_day,
    offset_segments,
    parse_date,
    period_key,
    window,
    zone,
)

HOUR = 3600


@pytest.mark.parametrize("name", ["Europe/Paris", "America/New_York", "Asia/Kolkata", "UTC"])
def test_offset_pieces_match_the_zone_hour_by_hour(name):
    tz = ZoneInfo(name)
    first = int(dt.datetime(2025, 1, 1, tzinfo=dt.UTC).timestamp())
    last = int(dt.datetime(2025, 12, 31, tzinfo=dt.UTC).timestamp())
    pieces = offset_segments(first, last, tz)
    changes = {"Europe/Paris": 3, "America/New_York": 3, "Asia/Kolkata": 1, "UTC": 1}
    assert len(pieces) == changes[name]
    for hour in range(first, last + 1, HOUR):
        offset = next(o for until, o in pieces if until is None or hour < until)
        day = local_day((hour + offset) // DAY)
        assert day == dt.datetime.fromtimestamp(hour, tz).date(), (name, hour)
        assert period_key(hour, "daily", tz) == day.isoformat()


def test_periods_weeks_start_on_monday():
    assert day_period(dt.date(2026, 12, 3), "weekly") == "2026-11-30"
    assert day_period(dt.date(2026, 12, 3), "monthly") == "2026-12"


def test_window_is_whole_local_days():
    paris = zone("Europe/Paris")
    span = window(dt.date(2026, 7, 1), dt.date(2026, 7, 1), paris)
    assert span.start == int(dt.datetime(2026, 6, 30, 22, tzinfo=dt.UTC).timestamp())
    assert span.end == span.start + DAY
    with pytest.raises(UsageError, match="before"):
        window(dt.date(2026, 7, 2), dt.date(2026, 7, 1), paris)


def test_dates_and_zones_are_read_or_refused():
    assert parse_date("20261201", "--since") == parse_date("2026-12-01", "--since")
    with pytest.raises(UsageError, match="not a date"):
        parse_date("12/01/2026", "--since")
    assert zone("local") is None
    with pytest.raises(UsageError, match="unknown time zone"):
        zone("Nowhere/Else")
