"""The claim `qwen_code` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/qwen_code.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "qwen-code"
"""The name of the adapter whose `sniff` this is."""

RECORD_TYPES = ("user", "assistant", "tool_result", "system")


def _is_record(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") in RECORD_TYPES
        and isinstance(value.get("uuid"), str)
        and "parentUuid" in value
        and "sessionId" in value
    )


def _has_parts(value: dict[str, Any]) -> bool:
    message = value.get("message")
    return isinstance(message, dict) and isinstance(message.get("parts"), list)


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        if _is_record(value) and (_has_parts(value) or value["type"] == "tool_result"):
            # above Claude Code's claim: its lines share uuid/parentUuid/sessionId,
            # but their messages hold `content`, never Gemini `parts`
            return Detection(0.97, "Qwen Code records (uuid chain, Gemini Content parts)")
    return None
