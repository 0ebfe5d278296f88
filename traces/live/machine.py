"""Watching this machine's stores from the web process, for the "On this machine" page.

"Import and keep watching" adds a store here; one thread of this process then runs
`watch_pass` over each watched store every WATCH_INTERVAL_SECONDS until "Stop", or
until the process exits (an `atexit` hook stops the thread between two sessions and
waits for it). Nothing starts by itself: `make serve` watches nothing until the page
asks.

A thread of this process, not a queue task: with the Redis queue a task runs in a
`run_huey` worker, maybe on another machine, whose home is not the one the page showed;
and a task that queues itself again every two seconds would fill the queue's log with
idle passes. Local mode serves one person from one process, so what this process
watches is what the page says.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from django.db import close_old_connections, connections
from django.utils import timezone

from traces.conf import inspector_settings
from traces.live.watch import follow_until, watch_pass

log = logging.getLogger(__name__)

EXIT_WAIT_SECONDS = 30.0
"""How long process exit waits for the session being imported to be stored."""


@dataclass(frozen=True)
class StoreWatch:
    """One watched store, as the page shows it: since when, and what its passes did."""

    key: str
    home: Path
    env: Mapping[str, str] = field(repr=False)
    since: datetime
    passes: int = 0
    imported: int = 0
    """Sessions this watch imported (new, or read again after a rewrite)."""
    appended_lines: int = 0
    last_pass_at: datetime | None = None
    problems: tuple[str, ...] = ()
    """The last pass's problems (a store gone, a file that does not read)."""
    failure: str = ""
    """The last pass ended with an unexpected error (logged with its traceback)."""


class MachineWatcher:
    """The stores this process watches, and the one thread that watches them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watching: dict[str, StoreWatch] = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        atexit.register(self.clear)

    def start(self, key: str, *, home: Path, env: Mapping[str, str]) -> StoreWatch:
        """Watch the store keyed `key` (its first pass starts at once); already watched:
        nothing changes."""
        with self._lock:
            watch = self._watching.get(key)
            if watch is None:
                watch = StoreWatch(key, home, dict(env), timezone.now())
                self._watching[key] = watch
            if self._thread is None:
                self._stop = threading.Event()
                self._thread = threading.Thread(
                    target=self._run, args=(self._stop,), name="machine-watch", daemon=True
                )
                self._thread.start()
        self._wake.set()
        return watch

    def stop(self, key: str) -> bool:
        """Stop watching one store (a pass under way finishes its session); False when it
        was not watched. The thread ends with the last store."""
        with self._lock:
            found = self._watching.pop(key, None) is not None
        self._wake.set()
        return found

    def status(self) -> dict[str, StoreWatch]:
        with self._lock:
            return dict(self._watching)

    def running(self) -> bool:
        """Whether the watching thread is alive (tests, and the page's "stopping")."""
        with self._lock:
            return self._thread is not None and self._thread.is_alive()

    def clear(self, timeout: float = EXIT_WAIT_SECONDS) -> None:
        """Stop every watch and wait for the thread (at process exit too)."""
        with self._lock:
            self._watching.clear()
            thread, self._thread = self._thread, None
            self._stop.set()
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                log.warning("the machine watcher did not stop within %.0f s", timeout)

    def _next(self, stop: threading.Event) -> list[StoreWatch] | None:
        """The stores to pass over now; None: this thread is done."""
        with self._lock:
            if stop.is_set() or not self._watching:
                if self._thread is threading.current_thread():
                    self._thread = None
                return None
            return list(self._watching.values())

    def _run(self, stop: threading.Event) -> None:
        try:
            while (watches := self._next(stop)) is not None:
                for watch in watches:
                    if stop.is_set():
                        break
                    self._pass(watch, stop)
                self._follow(watches, stop)
                self._wake.clear()
        finally:
            connections.close_all()  # this thread's own connections

    def _follow(self, watches: list[StoreWatch], stop: threading.Event) -> None:
        """Until the next pass is due: the live sessions of these stores, followed."""
        deadline = time.monotonic() + float(inspector_settings()["WATCH_INTERVAL_SECONDS"])
        try:
            follow_until(
                deadline,
                only=[watch.key for watch in watches],
                wait=lambda seconds: self._wake.wait(seconds) or stop.is_set(),
            )
        except Exception:  # as a failed pass: logged, and the watching goes on
            log.exception("following the live sessions failed")

    def _pass(self, watch: StoreWatch, stop: threading.Event) -> None:
        close_old_connections()
        imported = appended = 0
        problems: tuple[str, ...] = ()
        failure = ""
        try:
            report = watch_pass(
                home=watch.home,
                env=watch.env,
                only=(watch.key,),
                stopping=lambda: stop.is_set() or not self._watched(watch.key),
            )
        except Exception as exc:  # a failed pass must not end the watching: said, and logged
            log.exception("watching %s failed", watch.key)
            failure = f"{type(exc).__name__}: {exc}"[:500]
        else:
            imported, appended = report.imported + report.replaced, report.appended_lines
            problems = tuple(report.problems)
        with self._lock:
            current = self._watching.get(watch.key)
            if current is None or current.since != watch.since:
                return  # stopped (and maybe started again) meanwhile
            self._watching[watch.key] = replace(
                current,
                passes=current.passes + 1,
                last_pass_at=timezone.now(),
                imported=current.imported + imported,
                appended_lines=current.appended_lines + appended,
                problems=problems if not failure else current.problems,
                failure=failure,
            )

    def _watched(self, key: str) -> bool:
        with self._lock:
            return key in self._watching
