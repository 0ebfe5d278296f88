"""Adapter registry: modules of `traces.core.reading.formats` register their adapter on import."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .base import Adapter

_ADAPTERS: dict[str, type[Adapter]] = {}
_INFRASTRUCTURE = {"base", "registry", "detect"}


def register(adapter: type[Adapter]) -> type[Adapter]:
    """Class decorator: make an adapter available to detection and `--format`."""
    if not adapter.name:
        raise ValueError(f"{adapter.__qualname__} has no name")
    existing = _ADAPTERS.get(adapter.name)
    if existing is not None and existing is not adapter:
        raise ValueError(f"two adapters are named {adapter.name!r}")
    _ADAPTERS[adapter.name] = adapter
    return adapter


@cache
def _load_all() -> None:
    package = importlib.import_module(__package__ or "traces.core.reading.formats")
    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in _INFRASTRUCTURE and not module.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{module.name}")


def adapters() -> list[type[Adapter]]:
    """Every registered adapter, in a stable order."""
    _load_all()
    return [_ADAPTERS[name] for name in sorted(_ADAPTERS)]


def get_adapter(name: str) -> type[Adapter]:
    """The adapter called `name`; KeyError names the known ones."""
    _load_all()
    try:
        return _ADAPTERS[name]
    except KeyError:
        known = ", ".join(sorted(_ADAPTERS))
        raise KeyError(f"unknown format {name!r}; known formats: {known}") from None
