"""The claim `vscode_chatreplay` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/vscode_chatreplay.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "vscode-copilot-chatreplay"
"""The name of the adapter whose `sniff` this is."""


def _prompts_of(value: Any) -> list[Any] | None:
    if not isinstance(value, dict):
        return None
    prompts = value.get("prompts")
    if isinstance(prompts, list):
        return prompts
    if isinstance(value.get("logs"), list) and "prompt" in value:
        return [value]  # one prompt's logs
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values[:1]:
        prompts = _prompts_of(value)
        if prompts is None:
            continue
        if "totalLogEntries" in value or "exportedAt" in value:
            return Detection(0.95, "a Copilot Chat prompt-log export (prompts[].logs[])")
        logs = [log for p in prompts[:5] if isinstance(p, dict) for log in p.get("logs") or []]
        if any(isinstance(log, dict) and log.get("kind") == "request" for log in logs):
            return Detection(0.85, "Copilot Chat prompt logs (logs of kind request)")
    return None
