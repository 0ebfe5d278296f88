"""Each process's cache of decoded trace reports, so a page visit after the first skips
decoding the stored report (12.7 MB of JSON at 10,000 calls, ~0.35 s to decode; stored
packed, traces.fields.PackedJSONField, some 1.3 MB).

Keyed on (trace id, `Trace.report_version`): every save of the report increments the
version in the row (traces.models.Trace.save), so a rewrite by any process (a live
refresh on a worker, a reanalysis) changes the key the next read asks for; the stale
entry is never hit and ages out. Bounded by entry count and by the reports' JSON size
(REPORT_CACHE_ENTRIES, REPORT_CACHE_BYTES; JSON, not packed bytes); least recently used
first out.

Each decoded report is moved out of the cycle collector's reach (`gc.freeze`, see below).
The cached reports are shared by every request of the process: readers must not mutate
them (pages only read reports; writers build new ones).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from django.db.models import BinaryField, ExpressionWrapper, F

from traces import models
from traces.conf import inspector_settings
from traces.core.gcpause import LongLivedFreezer, cycle_collector_paused
from traces.fields import unpack_json, unpacked_size
from traces.stores import store

T = TypeVar("T")


class ReportCache:
    """A thread-safe LRU of (key -> value, size), bounded by count and total size."""

    def __init__(self) -> None:
        self._entries: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.freezer = LongLivedFreezer()

    def get(self, key: Any) -> Any | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found[0]

    def put(self, key: Any, value: Any, size: int, max_entries: int | None = None) -> None:
        limits = inspector_settings()
        max_bytes = limits["REPORT_CACHE_BYTES"]
        if max_entries is None:
            max_entries = _max_entries()
        if max_entries <= 0 or size > max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (value, size)
            self._bytes += size
            while len(self._entries) > max_entries or self._bytes > max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def holds(self, key: Any) -> bool:
        """Whether `key` is cached (not counted as a hit or a miss, nor moved up)."""
        with self._lock:
            return key in self._entries

    def clear(self) -> None:
        """Forget everything (tests and benches act as a cold process)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        return self._bytes


def _max_entries() -> int:
    return int(inspector_settings()["REPORT_CACHE_ENTRIES"])


DERIVED_PER_REPORT = 3
"""The values `derived` keeps of one report: its diagram index, what-if basis and what-if
inputs."""


class DecodedReports(ReportCache):
    """This process's decoded reports (tests and benches clear it to act as a cold
    process)."""


class DerivedValues(ReportCache):
    """Values computed from a cached report alone (the what-if basis), by the same key."""


def cached_report(
    trace_id: Any,
    version: int,
    load: Callable[[], tuple[bytes | None, int] | None],
) -> tuple[Any, int] | None:
    """(report, version) of a trace: from the cache, or `load()`ed as (packed JSON,
    version read with it), unpacked, decoded and kept. None when the row is gone."""
    key = (trace_id, version)
    cache = store(DecodedReports)
    found = cache.get(key)
    if found is not None:
        return found, version
    loaded = load()
    if loaded is None:
        return None
    packed, version = loaded
    if packed is None:
        return {}, version
    with cycle_collector_paused():  # millions of acyclic objects: a collection finds none
        report = unpack_json(packed)
    # Bounded by the report's JSON, not its packed bytes: decoded, a report takes some
    # 2.7 times its JSON, whatever its compression.
    cache.put((trace_id, version), report, unpacked_size(packed))
    # A decoded report is a few million long-lived objects: left to the cycle collector,
    # every full collection in this process (any page's) would walk them all, which cost
    # the 10,000-call trace's pages 0.15-0.3 s each. Frozen, the collector skips them;
    # reference counting still frees the report when the cache drops it (it has no cycles).
    cache.freezer.freeze()
    return report, version


def load_report(trace: models.Trace) -> None:
    """Fill a trace fetched with its report deferred: from this process's cache when it
    holds the row's version, else read (with the version stored beside it) and kept."""
    using = trace._state.db or "default"
    rows = models.Trace.objects.using(using).filter(pk=trace.pk)

    def load() -> tuple[bytes | None, int] | None:
        # The column's bytes as they are (its field would decode them): the cache
        # needs their unpacked size before it keeps the decoded report.
        raw = ExpressionWrapper(F("report"), output_field=BinaryField())
        found = rows.annotate(packed=raw).values_list("packed", "report_version").first()
        if found is None:
            return None
        packed, version = found
        return (None if packed is None else bytes(packed)), version

    found = cached_report(trace.pk, trace.report_version, load)
    if found is None:
        raise models.Trace.DoesNotExist("The trace was deleted.")
    trace.report, trace.report_version = found


def report_cached(trace: Any) -> bool:
    """Whether this process keeps the trace's report (of its row's version): a report
    larger than REPORT_CACHE_BYTES never is, and is decoded by every request."""
    return store(DecodedReports).holds((trace.pk, trace.report_version))


def derived(trace: Any, name: str, compute: Callable[[], T]) -> T:
    """`compute()`, a pure function of the trace's report, kept per report version (at
    most DERIVED_PER_REPORT per cached report); the value must not be mutated either."""
    key = (trace.pk, trace.report_version, name)
    derived_cache = store(DerivedValues)
    found = derived_cache.get(key)
    if found is not None:
        return found
    with cycle_collector_paused():  # many small acyclic records (the what-if basis)
        value = compute()
    derived_cache.put(key, value, 0, max_entries=DERIVED_PER_REPORT * _max_entries())
    derived_cache.freezer.freeze()  # long-lived too (see cached_report)
    return value


def clear() -> None:
    """Forget every cached report and derived value (act as a cold process)."""
    store(DecodedReports).clear()
    store(DerivedValues).clear()
