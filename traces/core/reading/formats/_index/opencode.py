"""The claim `opencode` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/opencode.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "opencode"
"""The name of the adapter whose `sniff` this is."""


def _kind(value: Any) -> str | None:
    """Which OpenCode record this is: session, message or part (by its id and keys)."""
    if not isinstance(value, dict):
        return None
    ident = value.get("id")
    if not isinstance(ident, str):
        return None
    if ident.startswith("prt") and "messageID" in value and "type" in value:
        return "part"
    if ident.startswith("msg") and "sessionID" in value and "role" in value:
        return "message"
    if ident.startswith("ses") and ("projectID" in value or "directory" in value):
        return "session"
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    kinds = sorted({kind for kind in map(_kind, values[:3]) if kind is not None})
    if kinds:
        what = "/".join(kinds)
        return Detection(0.9, f"an OpenCode {what} record (ses_/msg_/prt_ ids)")
    return None
