"""The claim `aider_chat` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/aider_chat.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "aider-chat"
"""The name of the adapter whose `sniff` this is."""

HEADER = re.compile(r"^# aider chat started at (?P<time>\S.*?)\s*$")


AIDER_LINE = re.compile(r"^(>( .*)?|####( .*)?)  $|^>$")
"""A line aider writes itself: `> ` output or `#### ` input, ending in a hard break."""


def sniff(values: Sequence[Any]) -> Detection | None:
    lines = [v for v in values if isinstance(v, str)]
    if not lines or len(lines) < len(values):
        return None
    if any(HEADER.match(line) for line in lines):
        return Detection(0.95, "a '# aider chat started at' header (aider's chat history)")
    own = [line for line in lines if AIDER_LINE.match(line)]
    rest = [line for line in lines if not AIDER_LINE.match(line)]
    if len(own) >= 5 and len(rest) <= max(1, len(lines) // 10):
        return Detection(
            0.6, "'> ' and '#### ' lines ending in a Markdown hard break (aider's chat history)"
        )
    return None
