"""Usage over time, read from the usage rows (traces.storage.usage), never from reports:
the page `/usage/` and the `usage` command ask here, and the core folds the sums
(traces.core.outputs.usage_periods).

The database adds the slots up per (UTC hour, model), per (agent, project), and the
findings and savings per rule and lever over the whole window; the indexes on (hour, trace) keep it
to the rows of the window, and the covering indexes on (rule, …) and (lever, …) let SQLite
read the findings and savings in group order instead of sorting them (migration 0031).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    ExpressionWrapper,
    F,
    Max,
    Min,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)

from traces import models
from traces.core.outputs.usage_periods import (
    DAY,
    PLACE_SUMS,
    SUMS,
    Window,
    fold,
    offset_segments,
    window,
)


@dataclass(frozen=True, slots=True)
class UsageQuery:
    period: str = "daily"
    tz: dt.tzinfo | None = None
    since: dt.date | None = None
    until: dt.date | None = None
    agent: str = ""
    project: str = ""
    """The agent's project (its working directory), as the trace list's `project`."""
    model: str = ""
    breakdown: bool = False


def _scoped(rows: QuerySet[Any], query: UsageQuery, span: Window,
            project_ids: Iterable[int] | None) -> QuerySet[Any]:  # fmt: skip
    if span.start is not None:
        rows = rows.filter(hour__gte=span.start)
    if span.end is not None:
        rows = rows.filter(hour__lt=span.end)
    if project_ids is not None:
        rows = rows.filter(trace__project_id__in=list(project_ids))
    if query.agent:
        rows = rows.filter(trace__agent=query.agent)
    if query.project:
        rows = rows.filter(trace__working_dir=query.project)
    return rows


def _local_day(slots: QuerySet[Any], span: Window, tz: dt.tzinfo | None) -> Any:
    """The SQL of a slot's local day number: `(hour + offset) / 86400`, the offset of the
    zone's piece the hour falls in (integer division on both databases)."""
    bounds = slots.aggregate(first=Min("hour"), last=Max("hour"))
    if bounds["first"] is None:
        return Value(0)
    pieces = offset_segments(bounds["first"], bounds["last"], tz)
    day = [(until, (F("hour") + Value(offset)) / Value(DAY)) for until, offset in pieces]
    if len(day) == 1:
        return ExpressionWrapper(day[0][1], output_field=BigIntegerField())
    return Case(
        *(When(hour__lt=until, then=expression) for until, expression in day[:-1]),
        default=day[-1][1],
        output_field=BigIntegerField(),
    )


def _renamed(rows: QuerySet[Any]) -> list[dict[str, Any]]:
    """The rows as dicts, the aggregates named after their columns again (an annotation
    may not reuse a column's name). Read with a plain cursor: the ORM's per-value
    converters were most of the time on 10,000 traces. PostgreSQL sums integers as
    `numeric` (a Decimal here): those become ints again."""
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [column[0].removeprefix("sum_") for column in cursor.description]
        return [
            {n: int(v) if isinstance(v, Decimal) else v for n, v in zip(names, row, strict=True)}
            for row in cursor.fetchall()
        ]


def usage_summary(*, query: UsageQuery, project_ids: Iterable[int] | None = None) -> dict[str, Any]:
    """The usage summary of the traces of `project_ids` (None: every trace)."""
    ids = None if project_ids is None else list(project_ids)
    span = window(query.since, query.until, query.tz)
    slots = _scoped(models.UsageSlot.objects.all(), query, span, ids)
    if query.model:
        slots = slots.filter(model=query.model)
    daily = _renamed(
        slots.annotate(day=_local_day(slots, span, query.tz))
        .values("day", "model")
        .annotate(**{f"sum_{n}": Sum(n) for n in SUMS})
        .order_by()
    )
    places = _renamed(
        slots.values("trace__agent", "trace__working_dir")
        .annotate(**{f"sum_{n}": Sum(n) for n in PLACE_SUMS})
        .order_by()
    )
    for row in places:
        row["agent"], row["project"] = row.pop("trace__agent"), row.pop("trace__working_dir")
    sessions = slots.values("trace_id").distinct().count()
    findings = _scoped(models.UsageFinding.objects.all(), query, span, ids)
    savings = _scoped(models.UsageSaving.objects.all(), query, span, ids)
    if query.model:
        with_model = models.UsageSlot.objects.filter(model=query.model).values("trace_id")
        findings = findings.filter(trace_id__in=with_model)
        savings = savings.filter(trace_id__in=with_model)
    finding_rows = _renamed(
        findings.values("rule")
        .annotate(
            sum_count=Sum("count"),
            sum_sessions=Count("trace_id", distinct=True),
            sum_cost_usd=Sum("cost_usd"),
        )
        .order_by()
    )
    saving_rows = _renamed(
        savings.values("lever", "scenario")
        .annotate(
            # Rows, not distinct traces: a trace has one saving per lever (a constraint).
            sum_sessions=Count("trace_id"),
            sum_usd_saved=Sum("usd_saved"),
            sum_priced=Count("trace_id", filter=Q(usd_saved__isnull=False)),
            sum_tokens_saved=Sum("tokens_saved"),
        )
        .order_by()
    )
    for row in saving_rows:
        if not row.pop("priced"):
            row["usd_saved"] = None
    return fold(
        daily,
        period=query.period,
        tz=query.tz,
        breakdown=query.breakdown,
        places=places,
        findings=finding_rows,
        savings=saving_rows,
        sessions=sessions,
    )
