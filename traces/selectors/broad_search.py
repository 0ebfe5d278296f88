"""A search that matches thousands of traces, on SQLite: its page found by walking the
sort's index and testing each trace, its count capped (issue 25).

The list's search takes the matching ids as one UNION (traces.selectors.traces), which is
right when few match: each part comes from its own index and only the matches are sorted.
For a word in every trace the UNION is 50,000 ids, each looked up in the (id, trace_id)
index of the calls' text, held in a temporary B-tree, then each trace read for its sort
column and all of them sorted: 450-550 ms on bench/list.py's rows, of which the page
shows 50. Walking the sort's index instead, newest (or costliest, …) first, and testing
each trace until 50 match reads a few hundred entries when most traces match, and the
count stops at `COUNT_CAP` matches, stated as "more than" on the page.

The test of each trace is indexed too: its name, model, tool names and file name by the
trigram table's ids (held once), its calls' text as an EXISTS over the trace's own few
entries (by the trace_id index) against the FTS5 table's matching rowids (held once).
The unary `+` keeps SQLite from driving the query from those lists (it would otherwise,
having no statistics, and sort every match again). Which plan a search gets is decided
by `is_broad`, from the two full-text indexes' own counts of matching rows (a bounded
read of each), before the query is made; both plans give the same rows in the same order.
PostgreSQL's planner weighs this from its statistics and keeps the UNION.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import uuid

from django.db import connection
from django.db.models import Exists, F, Func, OuterRef, Q, UUIDField
from django.db.models.expressions import RawSQL
from django.db.models.lookups import In

from traces import models
from traces.selectors.content import fts5_ready, fts5_words
from traces.storage.search_index import FTS_TABLE
from traces.storage.trace_text_index import KEY_TABLE, TEXT_TABLE, trigram_ready

BROAD_ROWS = 5_000
"""Matching rows of either index from which the walk is taken: below it the UNION holds a
few thousand ids at most; above it 50 matches are met within a few hundred traces walked
(at 50,000 traces on bench/list.py's rows, a UNION costs ~3 µs a match and the walk ~2 µs
a trace walked; the two meet near 1,200 matches, so 5,000 leaves the walk a margin)."""
COUNT_CAP = 1_000
"""Matches counted at most past the page's end: beyond, the page says "more than"."""


def _phrase(q: str) -> str:
    """One quoted FTS5 phrase: read as text, never as an operator or a column."""
    return '"' + q.replace('"', '""') + '"'


def _rows_at_least(table: str, match: str, rows: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT rowid FROM {table} WHERE {table} MATCH %s LIMIT %s)",
            [match, rows],
        )
        (found,) = cursor.fetchone()
    return bool(found >= rows)


def is_broad(q: str, terms: tuple[str, ...]) -> bool:
    """Whether the search for `q` (its words `terms`) is walked rather than UNIONed: on
    SQLite with both full-text tables, when either holds `BROAD_ROWS` matching rows."""
    if connection.vendor != "sqlite" or not (trigram_ready(connection) and fts5_ready()):
        return False
    if _rows_at_least(TEXT_TABLE, _phrase(q), BROAD_ROWS):
        return True
    return bool(terms) and _rows_at_least(FTS_TABLE, fts5_words(terms), BROAD_ROWS)


def _unindexed(field: str) -> Func:
    """`+column`: the same value, which SQLite does not look up through an index."""
    return Func(F(field), template="+%(expressions)s", output_field=UUIDField())


def broad_match(q: str, terms: tuple[str, ...]) -> Q:
    """The search's condition tested trace by trace (see the module's docstring): its
    id, its summary text holding `q`, or a call's text holding all of `terms`."""
    parts = [
        In(
            _unindexed("pk"),
            RawSQL(
                f"SELECT trace_id FROM {KEY_TABLE} WHERE id IN "
                f"(SELECT rowid FROM {TEXT_TABLE} WHERE {TEXT_TABLE} MATCH %s)",
                [_phrase(q)],
            ),
        )
    ]
    if terms:
        entries = models.SearchEntry.objects.filter(trace_id=OuterRef("pk")).filter(
            In(
                _unindexed("id"),
                RawSQL(
                    f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [fts5_words(terms)]
                ),
            )
        )
        parts.append(Exists(entries))
    with contextlib.suppress(ValueError):
        parts.append(Q(pk=uuid.UUID(q)))
    return functools.reduce(operator.or_, (Q(part) for part in parts))
