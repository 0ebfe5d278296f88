"""What the "On this machine" page reads: every known store, found or not, its sessions on
disk and what the watcher has imported of them (its `WatchedSession` rows).

The folders are listed afresh on each request (a `scan`: names and sizes, nothing is
parsed), so the page shows what is on disk now, not what the last pass saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from django.db.models import Count, Q

from traces import models
from traces.core.discovery import STORES, Store, StoreScan, scan

State = models.WatchedSession.State


@dataclass
class StoreOnDisk:
    """One store: the folders looked in, the sessions there, and the watcher's rows."""

    store: Store
    scans: list[StoreScan] = field(default_factory=list)
    overridden: bool = False
    """Its environment variable names the folder."""
    sessions: int = 0
    imported: int = 0
    """Sessions with a trace (imported whole, or followed live)."""
    live: int = 0
    failed: int = 0
    last_error: tuple[str, str] | None = None
    """(path, reason) of the session that failed last."""

    @property
    def found(self) -> bool:
        return any(not s.problem for s in self.scans)

    @property
    def problems(self) -> list[str]:
        return [s.problem for s in self.scans if s.problem]


def stores_on_disk(*, home: Path, env: Mapping[str, str]) -> list[StoreOnDisk]:
    """Every known store in `STORES` order, each with what `scan` found of it."""
    found = {store.key: StoreOnDisk(store) for store in STORES}
    for scanned in scan(home, env, absent=True):
        row = found[scanned.store.key]
        row.scans.append(scanned)
        row.overridden = row.overridden or scanned.overridden
        row.sessions += len(scanned.sessions)
    counts = models.WatchedSession.objects.values("store").annotate(
        imported=Count("pk", filter=Q(trace__isnull=False)),
        live=Count("pk", filter=Q(state=State.LIVE)),
        failed=Count("pk", filter=Q(state=State.ERROR)),
    )
    for count in counts:
        if (row := found.get(count["store"])) is not None:
            row.imported, row.live, row.failed = count["imported"], count["live"], count["failed"]
    errors = (
        models.WatchedSession.objects.filter(state=State.ERROR)
        .order_by("store", "-updated_at")
        .values_list("store", "path", "error")
    )
    for key, path, error in errors:
        row = found.get(key)
        if row is not None and row.last_error is None:
            row.last_error = (path, error)
    return list(found.values())
