"""The "On this machine" page (/machine/): the agents' session stores found under this
machine's home, what each holds and what is imported, and a button per store that
imports it and keeps watching it (traces.live.machine).

Local mode on loopback only (`Access.LOCAL`): a shared server must never show or import
the files of the machine it runs on. The home and the stores' environment variables are
this web process's own, the ones `manage.py watch` would use.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from traces.access.rules import Access, access
from traces.conf import inspector_settings
from traces.core.discovery import default_home, store_named
from traces.live.machine import MachineWatcher, StoreWatch
from traces.selectors.machine import StoreOnDisk, stores_on_disk
from traces.stores import store

ACTIONS = ("watch", "stop")


@dataclass(frozen=True)
class StoreCard:
    """One store as the page shows it."""

    on_disk: StoreOnDisk
    folders: tuple[str, ...]
    """The folders looked in, below the home written as `~`."""
    watch: StoreWatch | None
    list_url: str
    last_error_path: str


def shown_path(path: Path | str, home: Path) -> str:
    """A path as the page writes it: `~/…` below the home, else whole."""
    path = Path(path)
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


def _card(on_disk: StoreOnDisk, home: Path, watch: StoreWatch | None) -> StoreCard:
    if on_disk.store.in_projects:  # aider: the repositories holding a history
        folders = tuple(shown_path(c.path.parent, home) for s in on_disk.scans for c in s.sessions)
    elif on_disk.found or on_disk.overridden:
        folders = tuple(shown_path(s.location, home) for s in on_disk.scans)
    else:  # not found: every default folder looked in
        folders = tuple(shown_path(home / place, home) for place in on_disk.store.locations)
    error_path = shown_path(on_disk.last_error[0], home) if on_disk.last_error else ""
    list_url = reverse("traces:list") + "?" + urlencode({"agent": on_disk.store.agent})
    return StoreCard(on_disk, folders, watch, list_url, error_path)


def machine_context() -> dict:
    home = default_home(os.environ)
    watching = store(MachineWatcher).status()
    cards = [
        _card(on_disk, home, watching.get(on_disk.store.key))
        for on_disk in stores_on_disk(home=home, env=os.environ)
    ]
    found = [c for c in cards if c.on_disk.found]
    return {
        "home": str(home),
        "found": found,
        "absent": [c for c in cards if not c.on_disk.found],
        "sessions": sum(c.on_disk.sessions for c in found),
        "imported": sum(c.on_disk.imported for c in cards),
        "watching": bool(watching),
        "interval": inspector_settings()["WATCH_INTERVAL_SECONDS"],
    }


@access(Access.LOCAL)
@require_http_methods(["GET", "HEAD", "POST"])
def machine(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _act(request)
    return render(request, "traces/machine.html", machine_context())


def _act(request: HttpRequest) -> HttpResponse:
    """Start or stop watching one store, then back to the page (POST, redirect, GET)."""
    action, key = request.POST.get("action", ""), request.POST.get("store", "")
    known = store_named(key)
    if action not in ACTIONS or known is None:
        return HttpResponseBadRequest("Name a known store and an action: watch or stop.")
    watcher = store(MachineWatcher)
    if action == "watch":
        watcher.start(key, home=default_home(os.environ), env=os.environ)
        messages.success(request, f"Importing {known.agent} sessions, then watching for more.")
    elif watcher.stop(key):
        messages.success(request, f"Stopped watching {known.agent}.")
    else:
        messages.info(request, f"{known.agent} was not being watched.")
    return redirect(reverse("traces:machine") + f"#store-{key}")
