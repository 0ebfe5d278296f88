"""The claim `copilot_cli` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/copilot_cli.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "copilot-cli"
"""The name of the adapter whose `sniff` this is."""

EVENT_TYPES = frozenset(
    {
        "session.start",
        "session.resume",
        "session.model_change",
        "session.info",
        "session.error",
        "session.shutdown",
        "system.message",
        "user.message",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.message",
        "tool.execution_start",
        "tool.execution_complete",
        "hook.start",
        "hook.end",
        "permission.requested",
        "permission.completed",
        "abort",
    }
)
"""Event types seen in the real sessions (and `session.resume`, its resumed twin)."""


CALL_EVENTS = frozenset({"assistant.message", "user.message", "tool.execution_complete"})


def _is_event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("type"), str)
        and isinstance(value.get("data"), dict)
        and "id" in value
        and "parentId" in value
    )


def sniff(values: Sequence[Any]) -> Detection | None:
    events = [v for v in values if _is_event(v)]
    if not events:
        return None
    for event in events:
        data = event["data"]
        if event["type"] == "session.start" and (
            "copilotVersion" in data or data.get("producer") == "copilot-agent"
        ):
            return Detection(0.97, "events {type, data, id, parentId}: a Copilot CLI session")
    known = sum(1 for e in events if e["type"] in EVENT_TYPES)
    if known and any(e["type"] in CALL_EVENTS for e in events) and known * 2 >= len(events):
        return Detection(0.8, "Copilot CLI events (assistant.message, tool.execution_*)")
    return None
