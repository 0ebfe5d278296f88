"""The claim `aider_llm_history` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/aider_llm_history.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "aider-llm-history"
"""The name of the adapter whose `sniff` this is."""

BLOCK = re.compile(r"^(?P<kind>TO LLM|LLM RESPONSE) (?P<time>\d{4}-\d\d-\d\dT[\d:.]+)\s*$")


def sniff(values: Sequence[Any]) -> Detection | None:
    if not values or not all(isinstance(v, str) for v in values):
        return None
    first = BLOCK.match(values[0])
    if first and first.group("kind") == "TO LLM":
        return Detection(0.95, "starts with aider's 'TO LLM <time>' block (--llm-history-file)")
    return None
