"""Usage over time, read from the usage rows (traces.storage.usage), never from reports:
the page `/usage/` and the `usage` command ask here, and the core folds the sums
(traces.core.outputs.usage_periods).

The database adds the slots up per (UTC hour, model, agent, project) and the findings and
savings per rule and lever over the whole window; the indexes on (hour, trace) keep it
to the rows of the window.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum

from traces import models
from traces.core.outputs.usage_periods import SUMS, Window, fold, window


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


def _renamed(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The aggregates named after their columns again (an annotation may not reuse a
    column's name)."""
    return [{key.removeprefix("sum_"): value for key, value in row.items()} for row in rows]


def usage_summary(*, query: UsageQuery, project_ids: Iterable[int] | None = None) -> dict[str, Any]:
    """The usage summary of the traces of `project_ids` (None: every trace)."""
    ids = None if project_ids is None else list(project_ids)
    span = window(query.since, query.until, query.tz)
    slots = _scoped(models.UsageSlot.objects.all(), query, span, ids)
    if query.model:
        slots = slots.filter(model=query.model)
    hourly = _renamed(
        slots.values("hour", "model", "trace__agent", "trace__working_dir")
        .annotate(**{f"sum_{name}": Sum(name) for name in SUMS})
        .order_by()
    )
    for row in hourly:
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
            sum_sessions=Count("trace_id", distinct=True),
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
        hourly,
        period=query.period,
        tz=query.tz,
        breakdown=query.breakdown,
        findings=finding_rows,
        savings=saving_rows,
        sessions=sessions,
    )
