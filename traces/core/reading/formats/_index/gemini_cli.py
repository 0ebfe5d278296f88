"""The claim `gemini_cli` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/gemini_cli.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "gemini-cli"
"""The name of the adapter whose `sniff` this is."""

NOTICE_TYPES = ("info", "error", "warning")


MESSAGE_TYPES = ("user", "gemini", *NOTICE_TYPES)


LOG_KEYS = frozenset({"sessionId", "messageId", "type", "message", "timestamp"})


def is_header(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and ("projectHash" in value or "startTime" in value)
        and "type" not in value
    )


def is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") in MESSAGE_TYPES
        and "content" in value
        and "timestamp" in value
        and "uuid" not in value
        and "message" not in value
    )


def is_log_entry(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) >= LOG_KEYS
        and isinstance(value.get("message"), str)
        and "uuid" not in value
    )


# -- record shapes ------------------------------------------------------------------------
def _claim(value: Any) -> Detection | None:
    if is_header(value):
        return Detection(0.9, "a Gemini CLI session header (sessionId, projectHash, startTime)")
    if is_message(value):
        if value["type"] == "gemini" and ("tokens" in value or "toolCalls" in value):
            return Detection(0.85, "Gemini CLI messages (type gemini with tokens/toolCalls)")
        return Detection(0.5, "Gemini CLI messages (id, timestamp, type, content)")
    if is_log_entry(value) and value.get("type") == "user":
        return Detection(0.8, "Gemini CLI's prompt log (sessionId, messageId, message)")
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    best: Detection | None = None
    for value in values:
        claim = _claim(value)
        if claim is not None and (best is None or claim.score > best.score):
            best = claim
    return best
