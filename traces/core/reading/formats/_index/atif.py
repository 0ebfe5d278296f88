"""The claim `atif` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/atif.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "atif"
"""The name of the adapter whose `sniff` this is."""

STEP_SOURCES = {"system", "user", "agent"}


def _looks_like_trajectory(value: dict[str, Any]) -> bool:
    steps = value.get("steps")
    if not isinstance(steps, list) or "session_id" not in value:
        return False
    first = next((step for step in steps if isinstance(step, dict)), None)
    return first is not None and first.get("source") in STEP_SOURCES and "step_id" in first


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        if not isinstance(value, dict):
            continue
        version = value.get("schema_version")
        if isinstance(version, str) and version.upper().startswith("ATIF"):
            return Detection(0.95, f"an ATIF trajectory (schema_version {version})")
        if _looks_like_trajectory(value):
            return Detection(0.8, "a trajectory with session_id, agent and ATIF steps")
    return None
