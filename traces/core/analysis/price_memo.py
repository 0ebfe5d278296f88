"""The library's price answers kept on disk between processes, so that a short command
(`loop-inspector report`, `analyze`, `lint`) prices its calls without importing
genai-prices: that import (pydantic models, the library's httpx updater, its 1.5 MB data
module) costs more than reporting a few hundred calls.

What is kept, per model name asked: the library's model id and its price schedule (each
price with the UTC day it starts, as the library's `StartDateConstraint`s say), or that
the library knows no such model; and the price note (`described`). Only models whose
prices change by date alone are kept; one with off-peak hours is asked every time.

The file belongs to one copy of the library: it is named by the library's data file's path
and keyed by its size and modification time, so installing another version of genai-prices
starts a new memo instead of reading stale prices. A file that is missing, unreadable or not ours
is ignored and the library is asked, as without a memo; writing is best effort (atomic
replace, a lost update only costs a later process one import).

The folder is `$LOOP_INSPECTOR_CACHE_DIR`, else `$XDG_CACHE_HOME/loop-inspector`, else
`~/.cache/loop-inspector`; `LOOP_INSPECTOR_CACHE_DIR=""` turns the memo off.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any

import orjson

from traces.core.records import dataclass

from .price import Price

FORMAT = 1
"""Bumped when what is kept (or how a name is asked) changes: older files are ignored."""
MAX_NAMES = 200
"""Model names kept at most: names come from trace text, and a server asks many."""
MAX_FILE_BYTES = 1 << 20
"""A memo file larger than this (200 names take some 100 KB) is not ours: ignored."""
MAX_KEY = 256
"""A longer name (trace text can name a model with anything) is asked, never kept."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """A model's prices over time: (first UTC day, counted from the epoch, or None for
    always; prices), in the library's order, the last one in force winning."""

    entries: tuple[tuple[int | None, Price], ...]

    def on_day(self, day: int) -> Price:
        """The price in force on `day`, as the library's `ModelInfo.get_prices` picks it:
        the last entry already started, else the first."""
        for start, price in reversed(self.entries):
            if start is None or day >= start:
                return price
        return self.entries[0][1]

    def as_json(self) -> list[Any]:
        return [[start, _price_json(price)] for start, price in self.entries]

    @classmethod
    def from_json(cls, raw: list[Any]) -> Schedule:
        """A schedule as `as_json` wrote it; ValueError for any other shape (a damaged or
        planted file must fall back to the library, never fail a report)."""
        if not isinstance(raw, list) or not raw:
            raise ValueError("a schedule has at least one entry")
        return cls(tuple((_start(start), _price_from_json(price)) for start, price in raw))


def _start(raw: Any) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ValueError("a start day is a whole number")
    return raw


Known = tuple[str, Schedule] | None
"""A name's answer: (the library's model id, its schedule), or None (not a model it knows)."""


def _price_json(price: Price) -> list[Any]:
    tiers = [[start, _price_json(tier)] for start, tier in price.tiers]
    fields = [price.input, price.output, price.cache_write, price.cache_read]
    return [*fields, price.cache_write_1h, tiers]


def _price_from_json(raw: list[Any]) -> Price:
    input_price, output, write, read, write_1h, tiers = raw
    return Price(
        float(input_price),
        float(output),
        float(write),
        float(read),
        None if write_1h is None else float(write_1h),
        tuple((_tier_start(start), _price_from_json(tier)) for start, tier in tiers),
    )


def _tier_start(raw: Any) -> int:
    start = _start(raw)
    if start is None:
        raise ValueError("a tier starts at a token count")
    return start


def folder() -> str | None:
    """Where the memo lives, or None when it is turned off."""
    chosen = os.environ.get("LOOP_INSPECTOR_CACHE_DIR")
    if chosen is not None:
        return chosen or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "loop-inspector")


def file_name(identity: list[Any]) -> str:
    """One file per installed copy of the library (two environments on one machine keep a
    memo each instead of overwriting each other's), named by its data file's path."""
    import zlib

    return f"genai-prices-memo-{zlib.crc32(str(identity[0]).encode()):08x}.json"


def library_identity() -> list[Any] | None:
    """(path, size, modification time) of the installed library's data file, found
    without importing the library; None when it is not installed."""
    from importlib.util import find_spec

    try:
        spec = find_spec("genai_prices")
        places = list(spec.submodule_search_locations or []) if spec else []
        data = os.path.realpath(os.path.join(places[0], "data.py"))
        facts = os.stat(data)
    except (ImportError, IndexError, OSError, ValueError):
        return None
    return [data, facts.st_size, facts.st_mtime_ns]


class PriceMemo:
    """The memo of one process: read at the first question, written at each new answer."""

    def __init__(self, where: str | None, identity: list[Any] | None) -> None:
        self._path = os.path.join(where, file_name(identity)) if where and identity else None
        self._identity = identity
        self._names: dict[str, Any] = {}
        self._described: list[str] | None = None
        self._writing = threading.Lock()
        """A server's ingest threads may each learn a name: one writes at a time."""
        if self._path is not None:
            self._read()

    def _read(self) -> None:
        assert self._path is not None
        try:
            with open(self._path, "rb") as file:
                data = file.read(MAX_FILE_BYTES + 1)
            if len(data) > MAX_FILE_BYTES:
                return
            raw = orjson.loads(data)
            if raw.get("format") != FORMAT or raw.get("library") != self._identity:
                return
            names, described = raw["names"], raw["described"]
            text_pair = (
                isinstance(described, list)
                and len(described) == 2
                and all(isinstance(part, str) for part in described)
            )
            if isinstance(names, dict) and (described is None or text_pair):
                self._names, self._described = names, described
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return

    def knows(self, key: str) -> bool:
        return key in self._names

    def answer(self, key: str) -> Known:
        """What the library answered for `key` (call `knows` first)."""
        raw = self._names[key]
        if raw is None:
            return None
        try:
            return str(raw[0]), Schedule.from_json(raw[1])
        except (ValueError, TypeError, IndexError, KeyError):  # damaged: ask the library
            del self._names[key]
            raise LookupError(key) from None

    def remember(self, key: str, known: Known) -> None:
        if self._path is None or len(key) > MAX_KEY or len(self._names) >= MAX_NAMES:
            return
        with self._writing:
            self._names[key] = None if known is None else [known[0], known[1].as_json()]
            self._write()

    def described(self) -> tuple[str, str] | None:
        return None if self._described is None else (self._described[0], self._described[1])

    def remember_described(self, taken: str, source: str) -> None:
        if self._path is None:
            return
        with self._writing:
            self._described = [taken, source]
            self._write()

    def _write(self) -> None:
        # Imported here: a process that only reads the memo (every report after the
        # first) never writes it, so it does without tempfile (and the random it imports).
        import tempfile

        assert self._path is not None
        payload = {
            "format": FORMAT,
            "library": self._identity,
            "names": self._names,
            "described": self._described,
        }
        where = os.path.dirname(self._path)
        partial = None
        try:
            os.makedirs(where, mode=0o700, exist_ok=True)
            # A fresh name made with O_EXCL, mode 0600: a planted file or symlink of a
            # predictable name in a shared folder is never written through.
            handle, partial = tempfile.mkstemp(dir=where, prefix=".price-memo-", suffix=".tmp")
            with os.fdopen(handle, "wb") as file:
                file.write(orjson.dumps(payload))
            os.replace(partial, self._path)
        except OSError:
            if partial is not None:
                with contextlib.suppress(OSError):
                    os.unlink(partial)


_memo: PriceMemo | None = None


def memo() -> PriceMemo:
    """This process's memo, read at the first call (`reset` forgets it, for tests)."""
    global _memo
    if _memo is None:
        where = folder()
        _memo = PriceMemo(where, library_identity() if where else None)
    return _memo


def reset() -> None:
    global _memo
    _memo = None
