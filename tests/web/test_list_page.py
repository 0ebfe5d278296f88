"""A page of the list read as its ids and count in one query, then its rows
(traces.selectors.list_page), is Django's Paginator's page exactly: the same rows in the
same order, the same count and page number, past the end and with nothing found too.
CI runs this file on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from django.core.paginator import Paginator
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.web.test_list_plans import stored, views  # noqa: F401  (the fixture)
from traces.core.outputs.listquery import ListQuery
from traces.selectors.list_page import list_page
from traces.selectors.traces import LIST_COLUMNS, trace_search

pytestmark = pytest.mark.django_db

SIZE = 7
"""Small pages, so 300 traces make many of them and most views more than one."""


def paginated(params: dict[str, str], number: int) -> tuple[list, int, int]:
    paginator = Paginator(trace_search(query=ListQuery.parse(params)), SIZE)
    page = paginator.get_page(number)
    return [row.pk for row in page.object_list], paginator.count, page.number


def listed(
    params: dict[str, str], number: int, searched: bool | None = None
) -> tuple[list, int, int]:
    """The page as the list reads it (ids and count together for a search; `searched`
    True: that way for any view)."""
    if searched is None:
        searched = bool(params.get("q"))
    matching = trace_search(query=ListQuery.parse(params))
    shown = list_page(matching, number, SIZE, LIST_COLUMNS, searched=searched)
    return [row.pk for row in shown.rows], shown.paginator.count, shown.page.number


def test_every_view_gives_the_paginators_pages(stored):  # noqa: F811
    every = {**views(stored), "all": {}, "nothing": {"q": "no-such-trace-anywhere"}}
    for name, params in every.items():
        count = trace_search(query=ListQuery.parse(params)).count()
        last = max(1, -(-count // SIZE))
        for number in sorted({1, 2, last // 2 or 1, last, last + 1, 10_000}):
            expected = paginated(params, number)
            assert listed(params, number) == expected, (name, number)
            assert listed(params, number, searched=True) == expected, (name, number)


def test_a_page_is_two_queries_where_the_paginator_ran_two_long_ones(stored):  # noqa: F811
    matching = trace_search(query=ListQuery.parse({"q": "quetzal"}))
    with CaptureQueriesContext(connection) as queries:
        shown = list_page(matching, 2, SIZE, LIST_COLUMNS)
        [row.run_set for row in shown.rows]  # selected with the rows, no query per row
    reads = [q["sql"] for q in queries.captured_queries]
    assert len(shown.rows) == SIZE
    assert shown.paginator.count == 34  # one trace in 9 holds the word
    assert "OVER ()" in reads[0]  # the page's ids and the count together
    assert not any(sql.lstrip().upper().startswith("SELECT COUNT(") for sql in reads)
    assert len(reads) == 3  # ids and count, the rows with their sets, the rows' labels
    assert "traces_runset" in reads[1] and "traces_label" in reads[2]
