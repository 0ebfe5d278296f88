"""The trace list's context: the query from the URL, one page of rows, links that keep
the filters (sort headers, pages, removable filter chips)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.http import urlencode

from traces import models
from traces.access.rules import Principal, local_mode
from traces.core.analysis.rules.registry import rules
from traces.core.outputs.listquery import OUTCOME_CHOICES, SEVERITIES, ListQuery
from traces.selectors.broad_search import COUNT_CAP
from traces.selectors.content import search_content
from traces.selectors.list_page import list_page
from traces.selectors.traces import LIST_COLUMNS, list_choices, search_is_broad, trace_search
from traces.web.id_paths import path_maker

PAGE_SIZE = 50
SORT_COLUMNS = ("date", "cost", "calls", "findings")


def href(query: ListQuery, base: str = "") -> str:
    params = query.params()
    return f"{base}?{urlencode(params)}" if params else (base or "?")


def list_context(
    params: Mapping[str, str], who: Principal, base: str = "", fixed_set: str = ""
) -> dict[str, Any]:
    """Rows, counts and links of the list page for the query string `params` (a set
    page passes its set as `fixed_set`: always applied, never shown as a filter). Only
    what `who` may read is listed, and only its values are offered in the menus."""
    query = ListQuery.parse(params)
    if fixed_set:
        query = query.with_changes(set=fixed_set, page=query.page)
    broad = search_is_broad(query.q)
    matching = who.traces(trace_search(query=query, broad=broad))
    shown = list_page(
        matching,
        query.page,
        PAGE_SIZE,
        LIST_COLUMNS,
        searched=bool(query.q),
        count_cap=COUNT_CAP if broad else None,
    )
    rows, paginator, page = shown.rows, shown.paginator, shown.page
    # Unpriced rows link to their project's prices form: the slugs in one query, if any.
    unpriced = {row.project_id for row in rows if row.cost_usd is None and row.model}
    slugs = (
        dict(models.Project.objects.filter(pk__in=unpriced).values_list("pk", "slug"))
        if unpriced
        else {}
    )
    page_path, set_path = path_maker("traces:detail"), path_maker("traces:set")
    for row in rows:
        row.project_slug = slugs.get(row.project_id, "")
        row.page_href = page_path(row.pk)
        row.set_href = set_path(row.run_set_id) if row.run_set_id else ""
    if query.q and rows:
        # The snippet of each listed trace whose calls' text matched (others matched by name).
        listed = who.traces(models.Trace.objects.filter(pk__in=[row.pk for row in rows]))
        hits = {
            hit.trace_id: hit for hit in search_content(q=query.q, traces=listed, limit=len(rows))
        }
        for row in rows:
            row.content_hit = hits.get(row.pk)
    query_now = query.with_changes(page=page.number)
    sorts = {}
    for key in SORT_COLUMNS:
        state = "none"
        if query.sort_key == key:
            state = "descending" if query.descending else "ascending"
        sorts[key] = {"href": href(query.sorted_by(key), base), "state": state}
    chips = []
    for key, label, value in query.active_filters():
        if fixed_set and key == "set":
            continue
        remaining = {k: v for k, v in query.params().items() if k not in (key, "page")}
        chips.append(
            {
                "label": label,
                "value": value,
                "href": f"{base}?{urlencode(remaining)}" if remaining else (base or "?"),
            }
        )
    pages = {
        "first": href(query.with_changes(page=1), base) if page.number > 1 else None,
        "previous": (
            href(query.with_changes(page=page.previous_page_number()), base)
            if page.has_previous()
            else None
        ),
        "next": (
            href(query.with_changes(page=page.next_page_number()), base)
            if page.has_next()
            else None
        ),
        "last": (
            href(query.with_changes(page=paginator.num_pages), base)
            if page.number < paginator.num_pages and not shown.capped
            else None
        ),
    }
    return {
        "list_action": base or "/",
        "fixed_set": fixed_set,
        "query": query_now,
        "traces": rows,
        "page": page,
        "paginator": paginator,
        "count_capped": shown.capped,
        "pages": pages,
        "sorts": sorts,
        "chips": chips,
        "problems": query.problems,
        "choices": list_choices(visible=None if local_mode() else who.traces()),
        "outcome_choices": OUTCOME_CHOICES,
        "severities": SEVERITIES,
        "rule_ids": [rule.id for rule in rules()],
        "filters_open": any(
            getattr(query, name) not in (None, "", False)
            for name in (
                "format",
                "model",
                "agent",
                "project",
                "group",
                "label",
                *(() if fixed_set else ("set",)),
                "severity",
                "date_from",
                "date_to",
                "cost_min",
                "cost_max",
                "calls_min",
                "calls_max",
                "errors",
            )
        ),
    }
