"""The claim `claude_code` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/claude_code.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...dialects import claude_code as cc
from ..base import Detection

NAME = "claude-code"
"""The name of the adapter whose `sniff` this is."""


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        reason = cc.recognise(value)
        if reason:
            return Detection(0.95, reason)
    return None
