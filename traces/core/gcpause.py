"""Pause Python's cycle collector while a trace is analysed (it finds nothing to collect).

Analysing a trace allocates a large graph of small, acyclic objects (parsed JSON, blocks,
messages, calls) that stays alive until the analysis ends. Every few hundred allocations
the cycle collector walks the young objects, and every time the heap grows by a quarter it
walks all of them: on a 2,000-span OTel export that is 60% of the CPU time, reclaiming
nothing, since reference counting frees these objects. Pausing it for the duration of an
analysis keeps ingest linear in practice; reference counting still frees memory.

The pause nests and is thread-safe: the collector comes back when the last analysis
running in the process ends, and only if it was enabled before the first began.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

_lock = threading.Lock()
_depth = 0
_was_enabled = False

Fn = TypeVar("Fn", bound=Callable[..., Any])


@contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """The cycle collector off inside the block (reference counting still frees memory)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()


def without_cycle_collection(fn: Fn) -> Fn:
    """Decorator form of `cycle_collector_paused`, for the core's entry points."""

    @functools.wraps(fn)
    def paused(*args: Any, **kwargs: Any) -> Any:
        with cycle_collector_paused():
            return fn(*args, **kwargs)

    return paused  # type: ignore[return-value]


class LongLivedFreezer:
    """`gc.freeze()` for values kept for long (decoded reports), with what it freezes bounded.

    Frozen objects are skipped by every collection, which is the point for a cached report
    (millions of objects the collector would walk at each full collection, finding nothing).
    But a freeze takes every object alive at that moment, the current request's included;
    those that later become unreachable in a reference cycle (a request's database
    wrapper, its response) are never collected: issue 26 measured +0.16 MB per cache
    miss, 1.5 GB after 3,000 requests. So once the frozen set has grown to `growth` times
    what the last full collection left, it is unfrozen, collected and frozen again: the
    garbage is freed, memory stays within `growth` times what is alive, and the full walk
    is paid once per doubling, not at every page.
    """

    def __init__(self, growth: float = 2.0) -> None:
        self._growth = growth
        self._floor = 0
        self._lock = threading.Lock()

    def freeze(self) -> None:
        with self._lock:
            gc.freeze()
            count = gc.get_freeze_count()
            if not self._floor:
                # The first freeze sets the floor without a full collection (0.2 s on a
                # 20,000-call report's heap, paid by a process's first cold page): what
                # garbage it froze is freed at the first doubling, like any later.
                self._floor = count
            elif count > self._floor * self._growth:
                self.refreeze()

    def refreeze(self) -> None:
        """Collect what the frozen set holds that is garbage now, then freeze again."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._floor = gc.get_freeze_count()
