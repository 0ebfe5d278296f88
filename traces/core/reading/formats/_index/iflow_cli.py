"""The claim `iflow_cli` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/iflow_cli.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...dialects import claude_code as cc
from ..base import Detection

NAME = "iflow-cli"
"""The name of the adapter whose `sniff` this is."""

RESPONSE_ID = re.compile(r"^response-\d{10,}")


SESSION_ID = re.compile(r"^session-[0-9a-f]{8}-")


def _is_iflow_line(value: Any) -> str | None:
    if not isinstance(value, dict) or cc.recognise(value) is None:
        return None
    session = value.get("sessionId")
    if isinstance(session, str) and SESSION_ID.match(session):
        return "Claude-Code-like lines with iFlow's 'session-<uuid>' sessionId"
    message = value.get("message")
    message_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(message_id, str) and RESPONSE_ID.match(message_id):
        return "Claude-Code-like lines with iFlow's 'response-<ms>' message ids"
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        reason = _is_iflow_line(value)
        if reason:
            return Detection(0.97, reason)
    return None
