"""The trace list's queries use an index for every filter (issue 25), and give the rows the
same query gives without the indexes. CI runs this file on SQLite and on PostgreSQL.

Each view's queries are the ones the list page really runs (captured from `list_context`:
the count, the page, the snippets), explained by the database in use. SQLite plans do not
depend on the table's size (Django never runs ANALYZE), so a test table shows the
production plan. PostgreSQL's do: on a test table of a few hundred rows a sequential scan
is cheaper than any index and the planner rightly takes it, so the plans are read with
`enable_seqscan = off`, under which a "Seq Scan" remains only where no index can serve
the query (bench/list.py shows the planner taking these indexes by itself at 50,000).
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from traces import models
from traces.access.rules import Principal
from traces.core.outputs.listquery import ListQuery
from traces.pages import listing
from traces.pages.listing import list_context
from traces.selectors import broad_search, column_values
from traces.selectors.traces import MENU_COLUMNS, list_choices, search_is_broad, trace_search
from traces.storage.row_writer import insert_rows
from traces.storage.trace_text_index import KEY_TABLE, TEXT_TABLE, trigram_ready

pytestmark = pytest.mark.django_db

TOOLS = ["read_file", "grep", "web_search", "edit_file", "Find_Free_Slots"]
POSTGRES = connection.vendor == "postgresql"


@pytest.fixture
def stored():
    """300 traces varied in every column the list filters on, with rules, labels, sets
    and calls' text: enough rows that each filter keeps some and drops some."""
    run_sets = [models.RunSet.objects.create(name=f"night {n}") for n in range(3)]
    labels = [models.Label.objects.create(name=name) for name in ("baseline", "nightly")]
    now = timezone.now()
    traces = []
    for n in range(300):
        traces.append(
            models.Trace(
                name=f"task-{n:04d} {['refactor', 'BugFix', 'search', 'naïve Ünïcode'][n % 4]}",
                format=["claude-code", "openai-chat", "inspect-ai"][n % 3],
                source_filename=f"run_{n:04d}%.jsonl",
                calls_count=n % 40,
                outcome_kind=["finished", "api_error", "max_tokens"][n % 3],
                state=models.Trace.State.LIVE if n % 50 == 7 else models.Trace.State.COMPLETE,
                cost_usd=None if n % 11 == 0 else n / 100,
                model=["claude-sonnet-4-5", "gpt-4.1", "o3"][n % 3],
                tool_names=" ".join(TOOLS[n % 5 : n % 5 + 2]),
                error_results=n % 7 == 0,
                flags_count=n % 4,
                run_set=run_sets[n % 3] if n % 2 else None,
                agent=["", "claude-code", "codex"][n % 3],
                working_dir=["", "/home/ana/shop", "/srv/calendar"][n % 3],
            )
        )
    models.Trace.objects.bulk_create(traces)
    for n, trace in enumerate(traces):
        trace.created_at = now - dt.timedelta(hours=5 * n)
    models.Trace.objects.bulk_update(traces, ["created_at"])
    models.TraceRule.objects.bulk_create(
        models.TraceRule(trace=trace, rule=rule, severity=severity, count=1)
        for n, trace in enumerate(traces)
        for rule, severity in [("dangling-tool-call", "error"), ("slow-tool", "info")][: n % 3]
    )
    through = models.Trace.labels.through
    through.objects.bulk_create(
        through(trace_id=trace.pk, label_id=labels[n % 2].pk) for n, trace in enumerate(traces)
    )
    insert_rows(
        models.SearchEntry,
        ["trace_id", "call_index", "body"],
        (
            (trace.pk, 1, f"call text {'quetzal' if n % 9 == 0 else 'plain'}")
            for n, trace in enumerate(traces)
        ),
    )
    return {"traces": traces, "set": run_sets[1], "middle": traces[150]}


def views(stored) -> dict[str, dict[str, str]]:
    """One view per filter of the list (and the search box on each column it reads)."""
    day = stored["middle"].created_at.date()
    return {
        "tool name, by cost": {"q": "web_search", "sort": "-cost"},
        "tool name in another case": {"q": "FIND_free"},
        "name": {"q": "task-0042"},
        "word of names": {"q": "bugfix", "sort": "calls"},
        "non-ASCII letters": {"q": "NAïVE Ünï"},
        "file name, wildcards literal": {"q": "_0012%"},
        "model": {"q": "sonnet"},
        "trace id": {"q": str(stored["middle"].pk)},
        "calls' text": {"q": "quetzal"},
        "format": {"format": "openai-chat"},
        "outcome": {"outcome": "api_error"},
        "live": {"outcome": "live"},
        "rule": {"rule": "dangling-tool-call"},
        "rule + severity": {"rule": "slow-tool", "severity": "info"},
        "severity": {"severity": "error"},
        "model filter": {"model": "gpt-4.1"},
        "agent": {"agent": "codex"},
        "project, grouped": {"project": "/srv/calendar", "group": "agent"},
        "label": {"label": "nightly"},
        "set by id": {"set": str(stored["set"].pk)},
        "set by name": {"set": "night 2"},
        "dates": {"from": str(day - dt.timedelta(days=3)), "to": str(day)},
        "cost range": {"cost_min": "0.5", "cost_max": "1.2"},
        "calls range": {"calls_min": "30", "calls_max": "35", "sort": "-findings"},
        "errors": {"errors": "1"},
        "search + filters": {"q": "search", "format": "claude-code", "errors": "1"},
    }


SHORT = {"q": "o3"}
"""Under a trigram: scanned by design (and still right)."""


def captured(params: dict[str, str]) -> list[str]:
    """The SQL of each query the list page runs for `params` that reads traces_trace."""
    with CaptureQueriesContext(connection) as queries:
        list_context(params, Principal())
    return [
        q["sql"]
        for q in queries.captured_queries
        if "traces_trace" in q["sql"] and "sqlite_master" not in q["sql"]
    ]


def plan(sql: str) -> list[str]:
    with connection.cursor() as cursor:
        if POSTGRES:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute(f"EXPLAIN {sql}")
            return [row[0] for row in cursor.fetchall()]
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
        return [row[3] for row in cursor.fetchall()]


FULL_SCAN = re.compile(r"Seq Scan on (\w+)" if POSTGRES else r"SCAN (\w+)$")
"""A table read whole: a Seq Scan (PostgreSQL), a SCAN without an index (SQLite)."""


def full_scans(params: dict[str, str]) -> list[str]:
    return [
        line.strip()
        for sql in captured(params)
        if not sql.lstrip().upper().startswith("SELECT DISTINCT")  # the menus' values
        for line in plan(sql)
        if (found := FULL_SCAN.search(line.strip()))
        and found.group(1) not in SMALL_TABLES
        and found.group(1) != column_values.FOUND  # a menu's CTE: its own few rows
        and found.group(1) != "subquery"  # SQLite's own rows of a subquery (a capped count)
    ]


SMALL_TABLES = {"traces_label", "traces_runset", "traces_project"}
"""Tables of a few rows per project, read whole by the filter menus."""


def test_every_filter_of_the_list_uses_an_index(stored):
    scanned = {
        name: scans for name, params in views(stored).items() if (scans := full_scans(params))
    }
    assert scanned == {}


def test_the_menus_offer_every_distinct_value_in_order(stored):
    menus = list_choices()
    for name, field, skip_empty in MENU_COLUMNS:
        rows = models.Trace.objects.exclude(**{field: ""}) if skip_empty else models.Trace.objects
        expected = list(rows.order_by(field).values_list(field, flat=True).distinct())
        assert menus[name] == expected, name
        assert len(expected) >= 2, name  # the fixture varies each column
    # The path for a caller who may not read every trace gives the same menus.
    assert list_choices(visible=models.Trace.objects.all()) == menus


def test_the_menus_skip_through_each_columns_index(stored):
    """One index entry a value, not the whole index (`column_values`): every menu query
    searches an index of traces_trace, none reads the table or an index whole."""
    with CaptureQueriesContext(connection) as queries:
        list_choices()
    menus = [q["sql"] for q in queries.captured_queries if column_values.FOUND in q["sql"]]
    assert len(menus) == len(MENU_COLUMNS)
    for sql in menus:
        lines = plan(sql)
        text = "\n".join(lines)
        if POSTGRES:
            assert "Index Only Scan using trace_" in text, text
            assert "Seq Scan" not in text, text
        else:
            reads = [line for line in lines if "traces_trace" in line]
            assert reads and all("USING COVERING INDEX trace_" in line for line in reads), text
            assert all(">?" in line for line in reads), text  # a search from a value on


def test_the_search_box_is_served_by_the_trigram_index(stored):
    text = "\n".join(
        line for sql in captured({"q": "web_search", "sort": "-cost"}) for line in plan(sql)
    )
    if POSTGRES:
        assert "Bitmap Index Scan on trace_tool_names_trgm" in text
        assert "Bitmap Index Scan on trace_name_trgm" in text
    else:
        assert trigram_ready(connection)
        assert f"SCAN {TEXT_TABLE} VIRTUAL TABLE INDEX" in text


def test_a_term_shorter_than_a_trigram_is_scanned_and_still_found(stored):
    found = ids(SHORT)
    assert found == unindexed(SHORT)
    assert len(found) == 100  # every model "o3"


def ids(params: dict[str, str]) -> list:
    return list(trace_search(query=ListQuery.parse(params)).values_list("pk", flat=True))


def unindexed(params: dict[str, str]) -> list:
    """The rows of the same query with every index of traces_trace but its key's dropped
    (and SQLite's trigram table, so the search scans), in a savepoint rolled back after."""
    savepoint = transaction.savepoint()
    try:
        with connection.cursor() as cursor:
            for statement in _drops(cursor):
                cursor.execute(statement)
        assert not trigram_ready(connection)
        return ids(params)
    finally:
        transaction.savepoint_rollback(savepoint)


def _drops(cursor) -> list[str]:
    if POSTGRES:
        cursor.execute(
            "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "WHERE x.indrelid = 'traces_trace'::regclass AND NOT EXISTS "
            "(SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)"
        )
        return [f'DROP INDEX "{name}"' for (name,) in cursor.fetchall()]
    cursor.execute(
        "SELECT type, name FROM sqlite_master WHERE tbl_name = 'traces_trace' AND sql IS NOT NULL "
        "AND type IN ('index', 'trigger')"
    )
    drops = [f'DROP {kind.upper()} "{name}"' for kind, name in cursor.fetchall()]
    return [*drops, f"DROP TABLE IF EXISTS {TEXT_TABLE}", f"DROP TABLE IF EXISTS {KEY_TABLE}"]


def test_each_filter_gives_the_rows_the_unindexed_query_gives(stored):
    total = len(stored["traces"])
    for name, params in views(stored).items():
        found = ids(params)
        assert 0 < len(found) < total, name  # the filter keeps some rows and drops some
        assert found == unindexed(params), name


# -- a search matching thousands (SQLite): walked in the sort's order, its count capped --

sqlite_only = pytest.mark.skipif(
    POSTGRES, reason="PostgreSQL's planner chooses from its statistics: the UNION stays"
)


@pytest.fixture
def walked(monkeypatch):
    """Every indexed search planned as one matching thousands (traces.selectors.
    broad_search), on the fixture's 300 traces: the threshold, not the plan, is lowered."""
    monkeypatch.setattr(broad_search, "BROAD_ROWS", 1)


def searched_views(stored) -> dict[str, dict[str, str]]:
    """The views searching text a trigram index serves."""
    return {name: params for name, params in views(stored).items() if len(params.get("q", "")) > 2}


@sqlite_only
def test_a_broad_search_gives_the_union_plans_rows_in_its_order(stored):
    expected = {name: ids(params) for name, params in searched_views(stored).items()}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(broad_search, "BROAD_ROWS", 1)
        # Each but the id's: its text is in neither index, which is no reason to walk.
        broad = {
            name for name, params in searched_views(stored).items() if search_is_broad(params["q"])
        }
        assert broad == set(searched_views(stored)) - {"trace id"}
        found = {name: ids(params) for name, params in searched_views(stored).items()}
    assert found == expected


@sqlite_only
def test_a_broad_search_walks_an_index_for_every_view(stored, walked):
    scanned = {
        name: scans
        for name, params in searched_views(stored).items()
        if (scans := full_scans(params))
    }
    assert scanned == {}


@sqlite_only
@pytest.mark.parametrize(
    ("sort", "index"), [("", "trace_created_idx"), ("-cost", "trace_cost_idx")]
)
def test_a_broad_search_pages_in_the_sort_index_and_scans_without_it(stored, walked, sort, index):
    params = {"q": "task", **({"sort": sort} if sort else {})}
    # The walk for the page and the capped count: the matches' ids in the sort's order.
    page_query = next(sql for sql in captured(params) if re.search(r"ORDER BY .* LIMIT \d+$", sql))
    assert any(f"INDEX {index}" in line for line in plan(page_query))
    savepoint = transaction.savepoint()
    try:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP INDEX "{index}"')
        # Another text: SQLite's statement cache would give the EXPLAIN prepared before
        # the DROP again, whose plan is not made anew for the schema's change.
        without = plan(f"{page_query} ")
        assert not any(f"INDEX {index}" in line for line in without)
        assert any(FULL_SCAN.search(line) for line in without)  # so this test can fail
    finally:
        transaction.savepoint_rollback(savepoint)


@sqlite_only
def test_a_broad_search_counts_to_its_cap_and_says_more_than(stored, walked, monkeypatch, client):
    monkeypatch.setattr(listing, "COUNT_CAP", 10)
    shown = list_context({"q": "task"}, Principal())  # all 300 names hold it
    assert shown["count_capped"] and shown["paginator"].count == 60
    assert len(shown["traces"]) == 50 and shown["pages"]["last"] is None
    assert shown["pages"]["next"]
    page = client.get("/?q=task", HTTP_HOST="127.0.0.1").content.decode()
    assert "1–50 of more than 60" in page
    deep = list_context({"q": "task", "page": "6"}, Principal())  # its end is in reach
    assert not deep["count_capped"] and deep["paginator"].count == 300
    assert [row.pk for row in deep["traces"]] == ids({"q": "task"})[250:]
