"""Which traces' names, models, tool names or file names hold a piece of text: the list's
substring search, served by each database's trigram index (migration 0027, issue 25).

PostgreSQL: Django's own `icontains` (`UPPER("name"::text) LIKE UPPER('%…%')`), which the
pg_trgm GIN indexes over exactly those expressions serve. SQLite: the FTS5 trigram table
(traces.storage.trace_text_index), one column per Trace column, where a quoted phrase is
a substring match in any case. Its ids are taken as they are, without `icontains` over
the rows again: that re-read every matching row (each ~2 KB with its report, 20,000 of
them for a common tool name) and tripled the search's time. The result is LIKE's, but for
non-ASCII letters in another case, which FTS5 folds and SQLite's LIKE does not ("ÜNÏ"
finds "Ünïcode", as on PostgreSQL). Text shorter than a trigram, or a database without
the table, is scanned with `icontains`, as before: right, and slow only past tens of
thousands of traces.
"""

from __future__ import annotations

import functools
import operator

from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from traces import models
from traces.storage.trace_text_index import COLUMNS, KEY_TABLE, TEXT_TABLE, trigram_ready

TRIGRAM_CHARS = 3
"""FTS5's trigram tokenizer matches nothing for a shorter phrase."""


def indexed(q: str) -> bool:
    """Whether a trigram index serves the search for `q` (else a scan does)."""
    if len(q) < TRIGRAM_CHARS:
        return False
    return connection.vendor == "postgresql" or trigram_ready(connection)


def text_holds(q: str) -> Q:
    """The scan's condition: a column of the summary text holds `q` (`icontains`)."""
    return functools.reduce(operator.or_, (Q(**{f"{column}__icontains": q}) for column in COLUMNS))


def text_matches(q: str) -> QuerySet[models.Trace]:
    """The ids (`values("pk")`, unordered, for a subquery or a UNION) of the traces whose
    name, model, tool names or file name holds `q`, case-insensitively."""
    if len(q) >= TRIGRAM_CHARS and trigram_ready(connection):
        # One quoted phrase: FTS5 reads it as text, never as an operator or a column, and
        # the trigram tokenizer makes a phrase a substring match.
        phrase = '"' + q.replace('"', '""') + '"'
        matched = RawSQL(
            f"SELECT trace_id FROM {KEY_TABLE} WHERE id IN "
            f"(SELECT rowid FROM {TEXT_TABLE} WHERE {TEXT_TABLE} MATCH %s)",
            [phrase],
        )
        return models.Trace.objects.filter(pk__in=matched).order_by().values("pk")
    return models.Trace.objects.filter(text_holds(q)).order_by().values("pk")
