"""The list's queries as they were before issue 22 §3 and issue 25's second pass, for
bench/list.py to measure beside today's in the same run (`--baseline`).

Before: Django's Paginator counted the matches, then fetched the page with a second query
that found them all again and sorted every matching row whole; the content search read
each matched entry's trace id from the entry's row, and on PostgreSQL found the entries
as `id IN (SELECT id … WHERE document @@ …)`. Swapped in by patching the three
functions the list calls, for the bench's process only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from django.core.paginator import Paginator
from django.db.models import Prefetch


def old_list_page(
    matching: Any, number: int, size: int, columns: tuple[str, ...], searched: bool = True
) -> Any:
    from traces import models
    from traces.selectors.list_page import ListPage

    paginator = Paginator(matching, size)
    page = paginator.get_page(number)
    rows = list(
        page.object_list.select_related("run_set").prefetch_related(
            Prefetch("labels", queryset=models.Label.objects.only("name"))
        )
    )
    return ListPage(rows=rows, paginator=paginator, page=page)


def old_matching_entries(terms: tuple[str, ...]) -> Any:
    """PostgreSQL's entries as `id IN (SELECT id … WHERE <document> @@ …)`; else today's."""
    from django.db import connection
    from django.db.models.expressions import RawSQL

    from traces import models
    from traces.storage.search_index import DOCUMENT

    if not terms or connection.vendor != "postgresql":
        return today_matching_entries(terms)
    table = connection.ops.quote_name(models.SearchEntry._meta.db_table)
    return models.SearchEntry.objects.filter(
        id__in=RawSQL(
            f"SELECT id FROM {table} WHERE {DOCUMENT} @@ plainto_tsquery('simple'::regconfig, %s)",
            [" ".join(terms)],
        )
    )


def today_matching_entries(terms: tuple[str, ...]) -> Any:
    return TODAY["matching_entries"](terms)


def old_matching_traces(terms: tuple[str, ...]) -> Any:
    return old_matching_entries(terms).order_by().values("trace_id")


TODAY: dict[str, Any] = {}


@contextlib.contextmanager
def baseline() -> Iterator[None]:
    """The list page runs the old queries while this lasts (the names the list page and
    the search read at call time are swapped, and put back after)."""
    from traces.pages import listing
    from traces.selectors import content, traces

    TODAY["matching_entries"] = content.matching_entries
    today = listing.list_page, traces.matching_traces, content.matching_entries
    listing.list_page, traces.matching_traces = old_list_page, old_matching_traces
    content.matching_entries = old_matching_entries
    try:
        yield
    finally:
        listing.list_page, traces.matching_traces, content.matching_entries = today
