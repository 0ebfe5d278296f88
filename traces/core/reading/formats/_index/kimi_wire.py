"""The claim `kimi_wire` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/kimi_wire.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "kimi-wire"
"""The name of the adapter whose `sniff` this is."""

KIMI_TYPES = frozenset(
    {
        "context.append_loop_event",
        "context.append_message",
        "context.apply_compaction",
        "llm.request",
        "llm.tools_snapshot",
        "usage.record",
        "turn.prompt",
        "turn.steer",
        "turn.cancel",
        "tools.set_active_tools",
        "full_compaction.begin",
        "plan_mode.enter",
    }
)


def sniff(values: Sequence[Any]) -> Detection | None:
    kinds: set[str] = {
        v["type"]
        for v in values
        if isinstance(v, dict) and isinstance(v.get("type"), str) and "time" in v
    }
    found = kinds & KIMI_TYPES
    protocol = any(
        isinstance(v, dict) and v.get("type") == "metadata" and "protocol_version" in v
        for v in values
    )
    if len(found) >= 2 or (found and protocol):
        return Detection(0.9, "Kimi wire events (" + ", ".join(sorted(found)[:3]) + ")")
    return None
