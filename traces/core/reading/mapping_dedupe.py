"""A mapping's `dedupe`: records that repeat an id collapse into one.

Stores write a record more than once: a shipper that retries sends a line twice, a
tracing store appends a run again each time it is updated (started, then finished with
its output and usage). `dedupe: KEY` names the id; of the records that share one, the
last is kept (the most complete), in the place of the first (when it began).
`keep: first` keeps the first instead, and streams; `last` holds the records until the
file ends, as it cannot know earlier which version is the last. Records whose key is
null are never collapsed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from traces.core.records import dataclass, field

KEEPS = ("last", "first")


def key_of(value: Any) -> str | bytes:
    """A hashable form of a key (ids are strings or numbers, sometimes a list of both)."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)


@dataclass(slots=True)
class Deduper:
    """Collapses records by key: `offer` each, then `close` for those held back."""

    keep: str = "last"
    collapsed: int = 0
    _slots: list[tuple[int, Any]] = field(default_factory=list)
    _where: dict[str | bytes, int] = field(default_factory=dict)
    _seen: set[str | bytes] = field(default_factory=set)

    def offer(self, line: int, value: Any, key: Any) -> Iterator[tuple[int, Any]]:
        """The records ready to read now (none while the last version is awaited)."""
        if self.keep == "first":
            if key is not None:
                hashed = key_of(key)
                if hashed in self._seen:
                    self.collapsed += 1
                    return
                self._seen.add(hashed)
            yield line, value
            return
        if key is not None:
            hashed = key_of(key)
            slot = self._where.get(hashed)
            if slot is not None:
                self.collapsed += 1
                self._slots[slot] = (line, value)
                return
            self._where[hashed] = len(self._slots)
        self._slots.append((line, value))

    def close(self) -> Iterator[tuple[int, Any]]:
        slots, self._slots = self._slots, []
        self._where.clear()
        yield from slots
