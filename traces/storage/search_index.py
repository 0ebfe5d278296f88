"""Content search's rows: one per call, written beside the call's own row.

Every path that stores calls comes through `traces.storage.rows` (a whole ingest, a
reanalysis) or `traces.live.bulk` (a live trace's batches), which take their rows from
`search_rows`, so the index cannot miss a way in; deleting a trace removes its entries by
the foreign key's cascade (and on SQLite the FTS5 table follows by trigger, migration
0034, which reads each entry's text with `SEARCH_TEXT_FUNCTION`: registered here on every
SQLite connection Django opens).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper

from traces import models
from traces.core.model import Call
from traces.core.outputs.content_search import call_text
from traces.core.reading import blobs
from traces.models.rows import SEARCH_DOCUMENT as DOCUMENT
from traces.models.rows import SEARCH_FTS_TABLE as FTS_TABLE
from traces.models.rows import SEARCH_TEXT_FUNCTION as TEXT_FUNCTION
from traces.models.rows import SEARCH_TRACE_KEY_INDEX as TRACE_KEY_INDEX
from traces.models.rows import entry_text
from traces.storage.row_writer import insert_rows

__all__ = (
    "COLUMNS",
    "DOCUMENT",
    "FTS_TABLE",
    "TEXT_FUNCTION",
    "TRACE_KEY_INDEX",
    "clear",
    "fts5_ready",
    "index_calls",
    "register_functions",
    "search_rows",
)

COLUMNS = ("trace_id", "call_index", "body", "packed")
"""The columns of `search_rows`' rows."""


def index_calls(trace: models.Trace, calls: Iterable[Call]) -> int:
    """Store the searchable text of `calls` (calls with none are left out); the count."""
    rows = search_rows((trace.pk, call) for call in calls)
    # Many rows a statement: SQLite's FTS5 trigger index writes a segment per statement.
    return insert_rows(models.SearchEntry, COLUMNS, rows, rows_per_statement=500)


def search_rows(calls: Iterable[tuple[Any, Call]]) -> list[tuple[Any, int, str, bytes | None]]:
    """(trace id, call index, body, packed) of each (trace id, call) with text: packed where
    the database's index keeps no text of its own to read (SQLite's FTS5), else as text."""
    packs = fts5_ready()
    return [
        (trace_id, call.index, "", blobs.pack_text(text))
        if packs
        else (trace_id, call.index, text, None)
        for trace_id, call in calls
        if (text := call_text(call))
    ]


def fts5_ready() -> bool:
    """Whether SQLite's FTS5 table exists (migration 0022 skips it without FTS5)."""
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE name = %s", [FTS_TABLE])
        return cursor.fetchone() is not None


def clear(trace: models.Trace) -> None:
    """Forget a trace's entries before its calls are stored again (a reanalysis)."""
    trace.search_entries.all().delete()


def register_functions(
    sender: Any = None, connection: BaseDatabaseWrapper | None = None, **kwargs: Any
) -> None:
    """`TEXT_FUNCTION` on a new SQLite connection (a `connection_created` receiver): FTS5's
    triggers call it, so an entry cannot be written or deleted on a connection without it
    ("no such function", never an index out of step with its rows)."""
    if connection is not None and connection.vendor == "sqlite":
        register_on(connection.connection)


def register_on(raw: Any) -> None:
    """`TEXT_FUNCTION` on one sqlite3 connection (migration 0034 calls it on its own)."""
    raw.create_function(TEXT_FUNCTION, 2, entry_text, deterministic=True)
