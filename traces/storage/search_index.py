"""Content search's rows: one per call, written beside the call's own row.

Every path that stores calls comes through `traces.storage.rows` (a whole ingest, a
reanalysis, a live trace's batches), which calls `index_calls`, so the index cannot miss
a way in; deleting a trace removes its entries by the foreign key's cascade (and on
SQLite the FTS5 table follows by trigger, migration 0022).
"""

from __future__ import annotations

from collections.abc import Iterable

from traces import models
from traces.core.model import Call
from traces.core.outputs.content_search import call_text
from traces.models.rows import SEARCH_FTS_TABLE as FTS_TABLE
from traces.models.rows import SEARCH_TRACE_KEY_INDEX as TRACE_KEY_INDEX
from traces.models.rows import SEARCH_VECTOR_COLUMN as VECTOR_COLUMN
from traces.storage.row_writer import insert_rows

__all__ = ("FTS_TABLE", "TRACE_KEY_INDEX", "VECTOR_COLUMN", "clear", "index_calls")


def index_calls(trace: models.Trace, calls: Iterable[Call]) -> int:
    """Store the searchable text of `calls` (calls with none are left out); the count."""
    rows = ((trace.pk, call.index, text) for call in calls if (text := call_text(call)))
    # Many rows a statement: SQLite's FTS5 trigger index writes a segment per statement.
    return insert_rows(
        models.SearchEntry, ["trace_id", "call_index", "body"], rows, rows_per_statement=500
    )


def clear(trace: models.Trace) -> None:
    """Forget a trace's entries before its calls are stored again (a reanalysis)."""
    trace.search_entries.all().delete()
