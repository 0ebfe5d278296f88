"""The claim `goose` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/goose.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "goose"
"""The name of the adapter whose `sniff` this is."""

GOOSE_TOOL_TYPES = ("toolRequest", "toolResponse", "frontendToolRequest")


def _is_metadata(value: Any) -> bool:
    return isinstance(value, dict) and "message_count" in value and "description" in value


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("role") in ("user", "assistant")
        and isinstance(value.get("content"), list)
        and "created" in value
    )


def _has_goose_content(value: Any) -> bool:
    return _is_message(value) and any(
        isinstance(c, dict) and c.get("type") in GOOSE_TOOL_TYPES for c in value["content"]
    )


def sniff(values: Sequence[Any]) -> Detection | None:
    if values and _is_metadata(values[0]):
        return Detection(0.9, "Goose session metadata line (description, message_count)")
    if any(_has_goose_content(v) for v in values):
        return Detection(0.9, "Goose messages (toolRequest / toolResponse content)")
    return None
