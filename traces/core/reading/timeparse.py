"""Timestamps as the formats write them (epoch seconds or ms, ISO 8601) -> epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def to_epoch_seconds(value: Any) -> float | None:
    """Best-effort conversion; None when the value is not a recognisable time.

    ISO strings without an offset (claude-trace's `logged_at`) are read as UTC.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
        if number > 1e17:  # nanoseconds
            return number / 1e9
        if number > 1e14:  # microseconds
            return number / 1e6
        if number > 1e11:  # milliseconds
            return number / 1e3
        return number if number > 0 else None
    if isinstance(value, str) and value:
        try:  # the usual `2026-01-01T00:00:01.500Z`, read as is (3.11 reads a final Z)
            moment = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return moment.timestamp()
        text = value.strip().replace("Z", "+00:00")
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    return None
