"""A view of the first n messages of a growing transcript, shared by many requests.

Formats that log messages rather than requests (Claude Code sessions, Codex rollouts)
rebuild each call's request as "every message so far". Making each request a view of one
list, rather than a copy, keeps a long session linear; the builder asks two views of the
same list for their shared length in O(1) (`shared_prefix_length`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any, overload

from ..model import Message


class TranscriptView(Sequence[Any]):
    """The first `length` items of `items`; valid while `items` is only appended to."""

    __slots__ = ("_items", "_length")

    def __init__(self, items: list[Any], length: int) -> None:
        self._items = items
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return self._items[slice(*index.indices(self._length))]
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError("transcript index out of range")
        return self._items[position]

    def __iter__(self) -> Iterator[Any]:
        return islice(self._items, self._length)

    def __repr__(self) -> str:
        return f"TranscriptView({self._length} items)"

    def shared_prefix_length(self, other: Any) -> int | None:
        """Leading items two views of the same list share, or None for anything else."""
        if isinstance(other, TranscriptView) and other._items is self._items:
            return min(self._length, other._length)
        return None


class NormalizedOnce:
    """A format's `normalize` that reads each response once, for formats that log messages.

    The assistant message a transcript keeps for a response is normalised when its call
    is made (the call's `response`), and that very object is among what the next request
    appends, which the builder normalises again: a Claude Code session read every
    response twice. The adapter `keep`s a call's response `Message` (by the identity of its
    transcript message) for the one request that appends it next; any other message is
    normalised as before.
    """

    __slots__ = ("_kept", "_normalize")

    KEPT = 64
    """Responses kept at most: one a conversation, until its next request appends it (a
    response that no request appends, as a file's last, is dropped when this fills)."""

    def __init__(self, normalize: Callable[[Any], Message]) -> None:
        self._normalize = normalize
        self._kept: dict[int, tuple[Any, Message]] = {}

    def __call__(self, raw: Any) -> Message:
        kept = self._kept.pop(id(raw), None)
        if kept is not None and kept[0] is raw:
            return kept[1]
        return self._normalize(raw)

    def keep(self, raw: Any, message: Message | None) -> None:
        """`message` is what `raw` (a response, as its transcript holds it) reads as: the
        request that appends `raw` next takes it (a live preview of a response still
        growing is not kept: only a call that was made)."""
        if message is None:
            return
        if len(self._kept) >= self.KEPT:
            self._kept.clear()
        self._kept[id(raw)] = (raw, message)
