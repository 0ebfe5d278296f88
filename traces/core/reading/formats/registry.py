"""Adapter registry: modules of `traces.core.reading.formats` register their adapter on import.

Detection reads the scoring index (`_index/`: each reader's `sniff` in a light module of
its own) and imports only the reader it picks (`get_adapter`); `adapters()` imports them
all, for what needs every one (the upload form's menu, explaining a refusal, the tests).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple

from ._index import HELPERS
from .base import Adapter, Detection

_ADAPTERS: dict[str, type[Adapter]] = {}
_INFRASTRUCTURE = {"base", "registry", "detect"}
_PACKAGE = __package__ or "traces.core.reading.formats"


def register(adapter: type[Adapter]) -> type[Adapter]:
    """Class decorator: make an adapter available to detection and `--format`."""
    if not adapter.name:
        raise ValueError(f"{adapter.__qualname__} has no name")
    existing = _ADAPTERS.get(adapter.name)
    if existing is not None and existing is not adapter:
        raise ValueError(f"two adapters are named {adapter.name!r}")
    _ADAPTERS[adapter.name] = adapter
    return adapter


class Scorer(NamedTuple):
    """One format as detection sees it: its name, its claim on the first records and the
    module of its reader (imported only when chosen). A named tuple: a dataclass costs
    ~4 M instructions to create, a third of what this module saves a short report."""

    name: str
    sniff: Callable[[Sequence[Any]], Detection | None]
    module: str
    """The reader's module, under `formats/`."""


def _modules() -> list[str]:
    """The modules of the package that may hold a reader (helpers and the index aside)."""
    package = importlib.import_module(_PACKAGE)
    return [
        module.name
        for module in pkgutil.iter_modules(package.__path__)
        if module.name not in _INFRASTRUCTURE and not module.name.startswith("_")
    ]


@cache
def _load_all() -> None:
    for name in _modules():
        importlib.import_module(f"{_PACKAGE}.{name}")


@cache
def scorers() -> tuple[Scorer, ...]:
    """Every format's scorer, in the order of `adapters()` (by name: the first of equal
    scores wins). A reader without an index module (a format added without one: its
    test in `tests/core/test_format_index.py` fails) is imported and scored by itself."""
    found: list[Scorer] = []
    index = importlib.import_module(f"{_PACKAGE}._index")
    indexed = {module.name for module in pkgutil.iter_modules(index.__path__)}
    for module in _modules():
        if module in HELPERS:
            continue
        if module in indexed:
            entry = importlib.import_module(f"{_PACKAGE}._index.{module}")
            found.append(Scorer(entry.NAME, entry.sniff, module))
            continue
        importlib.import_module(f"{_PACKAGE}.{module}")
        found.extend(
            Scorer(adapter.name, adapter.sniff, module)
            for adapter in _ADAPTERS.values()
            if adapter.__module__ == f"{_PACKAGE}.{module}"
        )
    return tuple(sorted(found, key=lambda scorer: scorer.name))


def adapters() -> list[type[Adapter]]:
    """Every registered adapter, in a stable order."""
    _load_all()
    return [_ADAPTERS[name] for name in sorted(_ADAPTERS)]


def get_adapter(name: str) -> type[Adapter]:
    """The adapter called `name` (importing its reader alone when the index knows it);
    KeyError names the known ones."""
    if name not in _ADAPTERS:
        module = next((scorer.module for scorer in scorers() if scorer.name == name), None)
        if module is not None:
            importlib.import_module(f"{_PACKAGE}.{module}")
    if name not in _ADAPTERS:
        _load_all()
    try:
        return _ADAPTERS[name]
    except KeyError:
        known = ", ".join(sorted(_ADAPTERS))
        raise KeyError(f"unknown format {name!r}; known formats: {known}") from None
