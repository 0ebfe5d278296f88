"""The claim `loop_inspector` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/loop_inspector.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "loop-inspector"
"""The name of the adapter whose `sniff` this is."""

FORMAT_ID = "loop-inspector/events/v1"


EVENT_TYPES = frozenset({"request", "response", "tool_start", "tool_end"})


def sniff(values: Sequence[Any]) -> Detection | None:
    first = next((v for v in values if isinstance(v, dict)), None)
    if first is None:
        return None
    kind = first.get("type")
    if kind == "meta" and first.get("format") == FORMAT_ID:
        return Detection(0.95, f"first line is a meta line declaring {FORMAT_ID}")
    if kind in EVENT_TYPES:
        return Detection(0.95, f"first line is a Loop Inspector '{kind}' event")
    return None
