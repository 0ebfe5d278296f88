"""The claim `openhands_sdk` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/openhands_sdk.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "openhands-sdk"
"""The name of the adapter whose `sniff` this is."""

KINDS = frozenset(
    {
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "AgentErrorEvent",
        "ConversationStateUpdateEvent",
        "UserRejectObservation",
        "PauseEvent",
        "CondensationRequest",
        "Condensation",
    }
)


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and value.get("kind") in KINDS and "timestamp" in value


def _is_base_state(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("agent"), dict)
        and "llm" in value["agent"]
        and any(k in value for k in ("execution_status", "stats", "persistence_dir"))
    )


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        if _is_base_state(value):
            return Detection(0.9, "OpenHands SDK base_state.json (agent.llm, stats)")
        if _is_event(value):
            return Detection(0.9, "OpenHands SDK events (kind, timestamp, source)")
    return None
