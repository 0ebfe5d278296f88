"""The claim `codex_rollout` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/codex_rollout.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...dialects import codex
from ..base import Detection

NAME = "codex-rollout"
"""The name of the adapter whose `sniff` this is."""

ROLLOUT_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg"})


def _sniff_legacy(values: Sequence[Any]) -> Detection | None:
    """Early rollouts: a meta line {id, timestamp, instructions?} then bare items."""
    if not values or not isinstance(values[0], dict):
        return None
    first = values[0]
    if "id" not in first or "timestamp" not in first or "type" in first:
        return None
    items = [
        v
        for v in values[1:]
        if isinstance(v, dict) and (codex.is_model_output(v) or v.get("type") == "message")
    ]
    if items:
        # Above the 0.9 of an Anthropic message object: a bare assistant `message` item
        # looks like one, but the session line before it does not.
        return Detection(0.92, "an early Codex rollout: a session line, then bare history items")
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    shaped = 0
    for value in values:
        if not isinstance(value, dict) or "payload" not in value:
            continue
        kind = value.get("type")
        if kind == "session_meta" and isinstance(value["payload"], dict):
            return Detection(0.95, "a Codex rollout: a session_meta line with a payload")
        if kind in ROLLOUT_TYPES or kind == "compacted":
            shaped += 1
    if shaped >= 2 or (shaped and shaped == len(values)):
        return Detection(
            0.85, f"{shaped} of the first records are Codex rollout {{type, payload}} lines"
        )
    return _sniff_legacy(values)
