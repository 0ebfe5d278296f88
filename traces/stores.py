"""Where the process keeps its state: one named store per job, owned by the app config.

A module-level dict, lock or pool is state shared by every request, thread and test of
the process, reset only by reaching into the module. Instead, each piece of state is a
store: a small class with one job (`DecisionStore`, `RecordingQueue`, `ReportCache`, ...)
defined beside the code that uses it, with a public `clear()` that makes it act as in a
fresh process. The traces app config holds one `Stores` (`TracesConfig.stores`), which
makes each store on first use, one per class, and never replaces it: code may keep a
reference to a store (the proxy's fast path does), and `clear()` empties it in place.
Tests reset every store between tests with one fixture (tests/conftest.py).

`scripts/check_module_state.py` keeps new module-level state out.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

from django.apps import apps


class Store(Protocol):
    """What a store offers the registry: a constructor without arguments and `clear()`."""

    def clear(self) -> None:
        """Forget everything, as a fresh process would have nothing."""


S = TypeVar("S", bound=Store)


class Stores:
    """This process's stores, one per class, made on first use."""

    def __init__(self) -> None:
        self._made: dict[type, Store] = {}
        self._lock = threading.Lock()

    def get(self, kind: type[S]) -> S:
        """The process's store of this class (made now if it is the first ask)."""
        found = self._made.get(kind)
        if found is None:
            with self._lock:
                found = self._made.get(kind)
                if found is None:
                    found = self._made[kind] = kind()
        return found  # type: ignore[return-value]

    def clear(self) -> None:
        """`clear()` every store made so far (those not made yet hold nothing)."""
        with self._lock:
            made = list(self._made.values())
        for store in made:
            store.clear()


def stores() -> Stores:
    """The stores of this process, held by the traces app config."""
    return apps.get_app_config("traces").stores  # type: ignore[attr-defined,no-any-return]


def store(kind: type[S]) -> S:
    """The process's store of this class: `stores().get(kind)`."""
    return apps.get_app_config("traces").stores.get(kind)  # type: ignore[attr-defined,no-any-return]


class ThreadPoolStore:
    """A thread pool made on first use and let go by `clear()` (its threads finish their
    work; the next use starts new ones, sized by the settings of then). Subclasses say
    how many threads and their name."""

    thread_name = "pool"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def workers(self) -> int:
        return 1

    def executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=max(1, self.workers()), thread_name_prefix=self.thread_name
                )
            return self._pool

    def clear(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)
