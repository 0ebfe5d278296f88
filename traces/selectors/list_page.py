"""One page of the trace list: its rows and the count of all that match, for a search in
two short queries where Django's Paginator ran two long ones (issues 22 and 25).

The Paginator counts the matches (one query that finds them all) and then asks for the
page (a second query that finds them all again and sorts every matching row whole, on
SQLite walking each row's ~2 KB report to reach the columns stored after it). Here the
page's ids and the count come from one query (`COUNT(*) OVER ()` beside the ids, so the
matches are found once and only the sort's columns are read), then the page's 50 rows by
their ids. The rows, their order and the count are the Paginator's exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, Prefetch, QuerySet, Window

from traces import models


class CountedPaginator(Paginator):
    """A Paginator told its count (found beside the page's ids) instead of asking."""

    def __init__(self, object_list: Any, per_page: int, count: int) -> None:
        super().__init__(object_list, per_page)
        self.known_count = count

    @cached_property
    def count(self) -> int:
        return self.known_count


@dataclass(frozen=True)
class ListPage:
    """The rows of one page of the list, with the Paginator and Page the templates read."""

    rows: list[models.Trace]
    paginator: Paginator
    page: Page
    capped: bool = False
    """The count stopped at `paginator.count`: more match than that (`count_cap`)."""


def page_ids(matching: QuerySet[models.Trace], number: int, size: int) -> tuple[list[Any], int]:
    """The ids of page `number` of `matching` in its order, and how many match in all
    (-1 when the page is past the end, where no row carries the count)."""
    start = (number - 1) * size
    found = list(
        matching.annotate(list_total=Window(Count("*"))).values_list("pk", "list_total")[
            start : start + size
        ]
    )
    return [pk for pk, _ in found], (found[0][1] if found else -1)


def list_page(
    matching: QuerySet[models.Trace],
    number: int,
    size: int,
    columns: tuple[str, ...],
    searched: bool = True,
    count_cap: int | None = None,
) -> ListPage:
    """Page `number` of `matching` (Paginator.get_page's: past the end, the last page),
    its rows with `columns`, their run set and labels.

    `searched=False` (no search box text): the Paginator's own two queries, which the
    filters' indexes make short, a count read from an index and a page that stops after
    its rows in the sort's index order, where a count beside the ids would have every
    row of the table found and held before the first was given.

    `count_cap` (a search matching thousands, traces.selectors.broad_search): the page
    as the query's order gives it, stopping after its rows, and the matches counted up
    to `count_cap` past the page's end; `capped` says when more match."""
    if count_cap is not None:
        return _capped_page(matching, number, size, columns, count_cap)
    if not searched:
        paginator = Paginator(matching, size)
        page = paginator.get_page(number)
        return ListPage(
            rows=list(_with_sets_and_labels(page.object_list)), paginator=paginator, page=page
        )
    ids, count = page_ids(matching, number, size)
    if count < 0:
        count = matching.count() if number > 1 else 0
    paginator = CountedPaginator(matching, size, count)
    page = paginator.get_page(number)
    if page.number != number:
        ids, _ = page_ids(matching, page.number, size)
    rows = _with_sets_and_labels(models.Trace.objects.only(*columns).filter(pk__in=ids))
    by_id = {row.pk: row for row in rows}
    return ListPage(rows=[by_id[pk] for pk in ids if pk in by_id], paginator=paginator, page=page)


def _capped_page(
    matching: QuerySet[models.Trace], number: int, size: int, columns: tuple[str, ...], cap: int
) -> ListPage:
    """One walk of the sort's index for the page and the count: the ids of the matches in
    the page's order up to `cap` past the page's end. Counting them in a second query, as
    the Paginator does, found the matches a second time, and a broad search's lists (the
    trigram and full-text matches, held for the walk's tests) were built again with them:
    at 50,000 traces on bench/list.py's rows, half of a tool name's search."""
    start = (number - 1) * size
    limit = start + size + cap
    walked = list(matching.values_list("pk", flat=True)[: limit + 1])
    capped = len(walked) > limit
    paginator = CountedPaginator(matching, size, limit if capped else len(walked))
    page = paginator.get_page(number)  # past the end: the last page, as get_page gives
    start = (page.number - 1) * size
    ids = walked[start : start + size]
    rows = _with_sets_and_labels(models.Trace.objects.only(*columns).filter(pk__in=ids))
    by_id = {row.pk: row for row in rows}
    return ListPage(
        rows=[by_id[pk] for pk in ids if pk in by_id], paginator=paginator, page=page, capped=capped
    )


def _with_sets_and_labels(rows: QuerySet[models.Trace]) -> QuerySet[models.Trace]:
    return rows.select_related("run_set").prefetch_related(
        Prefetch("labels", queryset=models.Label.objects.only("name"))
    )
