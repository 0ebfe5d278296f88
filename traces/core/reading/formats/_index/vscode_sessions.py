"""The claim `vscode_sessions` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/vscode_sessions.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "vscode-copilot-sessions"
"""The name of the adapter whose `sniff` this is."""


def _is_session(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("requests"), list)
        and ("requesterUsername" in value or "responderUsername" in value)
        and ("sessionId" in value or "version" in value)
    )


def sniff(values: Sequence[Any]) -> Detection | None:
    if values and _is_session(values[0]):
        return Detection(0.9, "a VS Code chat session (sessionId, requesterUsername, requests)")
    return None
