"""The claim `pi_session` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/pi_session.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "pi-session"
"""The name of the adapter whose `sniff` this is."""


def _is_pi_record(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "session" and "cwd" in value and ("modelId" in value or "version" in value):
        return "a pi session header (type session, cwd, modelId/version)"
    message = value.get("message")
    if kind == "message" and isinstance(message, dict) and "timestamp" in value:
        if message.get("role") == "assistant" and "stopReason" in message and "api" in message:
            return "pi message records (assistant with api and stopReason)"
        if message.get("role") in ("toolResult", "bashExecution"):
            return "pi message records (toolResult / bashExecution roles)"
    settings = kind in ("thinking_level_change", "model_change") and "timestamp" in value
    if settings and ("thinkingLevel" in value or "modelId" in value):
        return "pi settings records (thinking_level_change / model_change)"
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        reason = _is_pi_record(value)
        if reason:
            return Detection(0.9, reason)
    return None
