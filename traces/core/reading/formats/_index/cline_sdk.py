"""The claim `cline_sdk` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/cline_sdk.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....coerce import dict_or_empty
from ..base import Detection

NAME = "cline-sdk"
"""The name of the adapter whose `sniff` this is."""


def is_session_metadata(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("session_id"), str)
        and ("messages_path" in value or "messagesPath" in dict_or_empty(value.get("metadata")))
        and "messages" not in value
    )


def is_messages_document(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return False
    if "sessionId" not in value or not ("system_prompt" in value or "agent" in value):
        return False
    first = next((m for m in value["messages"] if isinstance(m, dict)), None)
    return first is None or (
        isinstance(first.get("content"), list) and first.get("role") in ("user", "assistant")
    )


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values[:1]:
        if is_messages_document(value):
            return Detection(0.95, "a Cline SDK session (sessionId, system_prompt, messages)")
        if is_session_metadata(value):
            return Detection(0.9, "Cline SDK session metadata (session_id, messages_path)")
    return None
