"""The claim `inspect_ai` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/inspect_ai.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...containers import HEADER_MEMBERS, SAMPLE_MEMBER
from ..base import Detection

NAME = "inspect-ai"
"""The name of the adapter whose `sniff` this is."""


# -- detection ---------------------------------------------------------------------------
def _recognise(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    member = value.get("zip_member")
    if isinstance(member, str) and (member in HEADER_MEMBERS or SAMPLE_MEMBER.match(member)):
        return f"an Inspect AI .eval archive (ZIP member {member})"
    if _is_log(value):
        task = value["eval"].get("task")
        return f"an Inspect AI eval log (log version {value.get('version')}, task {task})"
    if _is_sample(value):
        return "an Inspect AI eval sample (id, epoch and events)"
    return None


def _is_log(value: dict[str, Any]) -> bool:
    spec = value.get("eval")
    return (
        isinstance(spec, dict)
        and ("task" in spec or "task_id" in spec)
        and ("samples" in value or "version" in value)
    )


def _is_sample(value: dict[str, Any]) -> bool:
    return "id" in value and "epoch" in value and isinstance(value.get("events"), list)


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        reason = _recognise(value)
        if reason:
            return Detection(0.95, reason)
    return None
