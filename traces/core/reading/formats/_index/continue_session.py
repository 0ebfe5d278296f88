"""The claim `continue_session` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/continue_session.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "continue"
"""The name of the adapter whose `sniff` this is."""

INDEX_KEYS = ("sessionId", "title", "dateCreated", "workspaceDirectory")


def is_index_entry(value: Any) -> bool:
    return (
        isinstance(value, dict) and all(k in value for k in INDEX_KEYS) and "history" not in value
    )


def is_session(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("history"), list)
        and "sessionId" in value
        and ("workspaceDirectory" in value or "title" in value)
    )


def sniff(values: Sequence[Any]) -> Detection | None:
    if values and is_session(values[0]):
        return Detection(0.9, "a Continue session (sessionId, workspaceDirectory, history)")
    if values and all(is_index_entry(v) for v in values):
        return Detection(0.85, "Continue's session index (sessionId, title, dateCreated)")
    return None
