"""Compare transcripts: which messages two requests share, ignoring prompt-cache marks.

Rebuilding a loop asks one question of every request: how many leading messages does it
share with the loop's latest one? The answer decides the loop (`loops`) and what the call
appended. Clients move `cache_control` to the newest message on every call (Claude Code
does), so an unchanged message can differ only by that marker: it is ignored here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson


def key(message: Any) -> bytes:
    """A message (or any JSON value) as comparable bytes, cache marks left out."""
    try:
        return orjson.dumps(without_cache_marks(message), option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return repr(message).encode()


def same(mine: Any, theirs: Any) -> bool:
    """Equal messages, ignoring prompt-caching breakpoints."""
    return bool(mine == theirs or without_cache_marks(mine) == without_cache_marks(theirs))


def without_cache_marks(message: Any) -> Any:
    """The message without `cache_control` on it or on its content blocks."""
    if not isinstance(message, dict):
        return message
    content = message.get("content")
    if "cache_control" not in message and not isinstance(content, list):
        return message
    stripped = {k: v for k, v in message.items() if k != "cache_control"}
    if isinstance(content, list):
        stripped["content"] = [
            {k: v for k, v in block.items() if k != "cache_control"}
            if isinstance(block, dict) and "cache_control" in block
            else block
            for block in content
        ]
    return stripped


def equal_prefix(messages: Sequence[Any], previous: Sequence[Any], size: int) -> bool:
    """Whether the first `size` messages of both requests are the same."""
    # The plain comparison runs in C; cache markers are only looked at when it fails.
    if list(messages[:size]) == list(previous):
        return True
    return all(same(messages[i], previous[i]) for i in range(size - 1, -1, -1))


def common_prefix(messages: Sequence[Any], previous: Sequence[Any]) -> int:
    """How many leading messages the two requests share."""
    # Adapters whose requests are views of one growing transcript answer in O(1).
    shared = getattr(messages, "shared_prefix_length", None)
    known: int | None = shared(previous) if shared is not None else None
    if known is not None:
        return known
    size = min(len(messages), len(previous))
    if list(messages[:size]) == list(previous[:size]):  # C-level, identity shortcut
        return size
    count = 0
    for mine, theirs in zip(messages, previous, strict=False):
        if not same(mine, theirs):
            break
        count += 1
    return count
