"""The claim `cline_task` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/cline_task.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....coerce import text_of
from ..base import Detection

NAME = "cline-task"
"""The name of the adapter whose `sniff` this is."""

CLINE_TEXT = ("<task>", "<environment_details>", "<feedback>", "<user_message>")


UI_TYPES = ("say", "ask")


def _first_text(value: dict[str, Any]) -> str:
    return text_of(value.get("content"))


def is_history_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("role") in ("user", "assistant")
        and isinstance(value.get("content"), (str, list))
    )


def is_ui_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in UI_TYPES and "ts" in value


def is_task_metadata(value: Any) -> bool:
    return isinstance(value, dict) and "files_in_context" in value and "model_usage" in value


def sniff(values: Sequence[Any]) -> Detection | None:
    records = [v for v in values if isinstance(v, dict)]
    if not records:
        return None
    if len(records) == 1 and is_task_metadata(records[0]):
        return Detection(0.85, "a Cline task_metadata.json (files_in_context, model_usage)")
    if all(is_ui_message(v) for v in records) and any("say" in v for v in records):
        return Detection(0.85, "Cline UI messages (ts, type say/ask)")
    messages = [v for v in records if is_history_message(v)]
    if len(messages) >= 0.8 * len(records):
        first = next((v for v in messages if v.get("role") == "user"), None)
        if first is not None and any(tag in _first_text(first) for tag in CLINE_TEXT):
            return Detection(0.8, "Anthropic messages of a Cline task (<task>, environment)")
        if any("ts" in v for v in messages):
            return Detection(0.7, "Anthropic messages with Cline's 'ts' timestamps")
    return None
