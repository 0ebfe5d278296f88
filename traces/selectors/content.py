"""Content search: which calls' text holds every word of a query, and a snippet of each.

The words come from `traces.core.outputs.content_search.search_terms` (letters and digits
only), so neither engine ever sees query syntax from the search box; each engine is given
them as plain words: an FTS5 query of quoted words on SQLite, `plainto_tsquery('simple')`
on PostgreSQL, both requiring all of them. Without FTS5 (an SQLite built without it) the
text is scanned instead: right, but slow past a few thousand calls (traces.W003 says so).
Snippets are cut from the entries' text, packed or not (traces.models.rows SearchEntry).
"""

from __future__ import annotations

import functools
import operator
import re
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import BooleanField, Count, F, Func, Min, Q, QuerySet, TextField
from django.db.models.expressions import RawSQL

from traces import models
from traces.core.outputs.content_search import Snippet, search_terms, snippet
from traces.models.rows import entry_text
from traces.storage.search_index import (
    DOCUMENT,
    FTS_TABLE,
    TEXT_FUNCTION,
    TRACE_KEY_INDEX,
    fts5_ready,
)


@dataclass(frozen=True)
class ContentHit:
    """A trace whose calls' text matched: its first matching call and a snippet of it."""

    trace_id: uuid.UUID
    call_index: int
    snippet: Snippet
    calls_matching: int


FTS5_SEPARATORS = re.compile("[\u19b0-\u19c0\u19c8\u19c9\u1cf2\u1cf3]+")
"""The letters and digits of a query's words (`search_terms`) that FTS5's unicode61
tokenizer, fixed at Unicode 6.1, reads as separators (New Tai Lue vowel signs, two Vedic
signs; tests/web/test_content_search.py asks SQLite for every one). The index keeps no
positions (detail=none, migration 0034), so a quoted word that FTS5 splits in two would
be a phrase query, which it refuses: such a word is given as its pieces, each required."""


def fts5_words(terms: tuple[str, ...]) -> str:
    """An FTS5 query requiring every one of `terms`: each a quoted string (never an
    operator or a column), each one token of the index."""
    pieces = (piece for term in terms for piece in FTS5_SEPARATORS.split(term) if piece)
    return " ".join('"' + piece.replace('"', '""') + '"' for piece in pieces)


def matching_entries(terms: tuple[str, ...]) -> QuerySet[models.SearchEntry]:
    """Entries whose text holds every one of `terms` (words from `search_terms`)."""
    entries = models.SearchEntry.objects.all()
    if not terms:
        return entries.none()
    if connection.vendor == "postgresql":
        # A condition on the entries themselves, not `id IN (SELECT id … WHERE …)`, which
        # PostgreSQL joined back to a scan of every entry (twice the time for a word in
        # every trace, bench/list.py).
        return entries.filter(
            RawSQL(
                f"{DOCUMENT} @@ plainto_tsquery('simple'::regconfig, %s)",
                [" ".join(terms)],
                output_field=BooleanField(),
            )
        )
    if connection.vendor == "sqlite" and fts5_ready():
        return entries.filter(
            id__in=RawSQL(
                f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [fts5_words(terms)]
            )
        )
    # No index: every entry's text scanned (packed or not, SQLite's function reads it).
    text = Func(F("body"), F("packed"), function=TEXT_FUNCTION, output_field=TextField())
    return entries.annotate(entry_text=text).filter(
        *(Q(entry_text__icontains=term) for term in terms)
    )


def matching_traces(terms: tuple[str, ...]) -> QuerySet[Any]:
    """The ids (one column, unordered, for a subquery or a UNION) of the traces whose
    calls' text holds every one of `terms`: `matching_entries`' traces.

    On SQLite the trace of each entry FTS5 matched is read from the (id, trace_id) index
    (INDEXED BY: without statistics the planner takes the row by its rowid instead, and
    `trace_id`, stored after the ~2 KB body, costs reading the whole row, a page or more:
    3-4x slower for a word in every trace, on bench/list.py's rows)."""
    if terms and connection.vendor == "sqlite" and fts5_ready():
        table = connection.ops.quote_name(models.SearchEntry._meta.db_table)
        traces = RawSQL(
            f"SELECT trace_id FROM {table} INDEXED BY {TRACE_KEY_INDEX} WHERE id IN "
            f"(SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s)",
            [fts5_words(terms)],
        )
        return models.Trace.objects.filter(pk__in=traces).order_by().values("pk")
    return matching_entries(terms).order_by().values("trace_id")


def search_content(*, q: str, traces: QuerySet[models.Trace], limit: int = 50) -> list[ContentHit]:
    """Traces among `traces` (already narrowed to what the caller may read, e.g. by
    `principal.traces()`) whose calls' text matches `q`: at most `limit`, most matching
    calls first, each with its first matching call and a snippet of that call's text."""
    terms = search_terms(q)
    if not terms:
        return []
    found = (
        matching_entries(terms)
        .filter(trace__in=traces.values("pk"))
        .values("trace_id")
        .annotate(calls=Count("id"), first=Min("call_index"))
        .order_by("-calls", "trace_id")[:limit]
    )
    firsts = {row["trace_id"]: (row["first"], row["calls"]) for row in found}
    if not firsts:
        return []
    wanted = functools.reduce(
        operator.or_,
        (Q(trace_id=trace_id, call_index=first) for trace_id, (first, _) in firsts.items()),
    )
    bodies = {
        trace_id: entry_text(body, packed)
        for trace_id, body, packed in models.SearchEntry.objects.filter(wanted).values_list(
            "trace_id", "body", "packed"
        )
    }
    return [
        ContentHit(trace_id, first, snippet(bodies.get(trace_id, ""), terms), calls)
        for trace_id, (first, calls) in firsts.items()
    ]
