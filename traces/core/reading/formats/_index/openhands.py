"""The claim `openhands` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/openhands.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "openhands-events"
"""The name of the adapter whose `sniff` this is."""


def _is_event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and ("action" in value or "observation" in value)
        and "source" in value
        and ("id" in value or "timestamp" in value)
    )


def _events_of(value: Any) -> list[Any] | None:
    """The events a record holds: one event, a list of them, or `{events: [...]}`."""
    if _is_event(value):
        return [value]
    events = value.get("events") if isinstance(value, dict) else None
    if isinstance(events, list):
        return events
    if isinstance(value, list) and any(_is_event(v) for v in value[:5]):
        return value
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        events = _events_of(value)
        if events and any(isinstance(e, dict) and "tool_call_metadata" in e for e in events[:50]):
            reason = "events with action/observation, source and tool_call_metadata"
            return Detection(0.9, reason)
        if events:
            return Detection(0.6, "OpenHands events (action/observation with source)")
    return None
