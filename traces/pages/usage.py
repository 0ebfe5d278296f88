"""The usage page, `/usage/`: spend and tokens per day, week or month across the traces
the user may read, where the money went (by kind of token, by bucket, by finding) and
the what-if levers summed across sessions. The same summary as `manage.py usage`
(traces.selectors.usage), read from the usage rows, never from reports.

Days are counted in the `tz` query parameter's zone: by default the machine's own in
local mode (as the command and ccusage) and UTC in shared mode, where the server's zone
means nothing to the reader.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from traces.access.rules import Access, access, local_mode, principal
from traces.core.outputs.render.chart_style import THEMES
from traces.core.outputs.render.usage_chart import usage_figure
from traces.core.outputs.usage_periods import PERIODS, UsageError, parse_date, zone
from traces.core.outputs.usage_text import BUCKET_LABELS, KIND_LABELS
from traces.selectors.usage import UsageQuery, usage_summary


def _query(params: Any, problems: list[str]) -> UsageQuery:
    """The page's query, leniently: what cannot be read is dropped and named."""
    period = params.get("period", "daily")
    if period not in PERIODS:
        problems.append(f"unknown period {period!r}: showing days")
        period = "daily"
    default_zone = "local" if local_mode() else "UTC"
    try:
        tz = zone(params.get("tz") or default_zone)
    except UsageError as exc:
        problems.append(str(exc))
        tz = zone(default_zone)
    dates = {}
    for key in ("since", "until"):
        try:
            dates[key] = parse_date(params[key], key) if params.get(key) else None
        except UsageError as exc:
            problems.append(str(exc))
            dates[key] = None
    if dates["since"] and dates["until"] and dates["until"] < dates["since"]:
        problems.append("“until” is before “since”: showing from “since” on")
        dates["until"] = None
    return UsageQuery(
        period=period,
        tz=tz,
        since=dates["since"],
        until=dates["until"],
        agent=params.get("agent", "")[:100],
        project=params.get("project", "")[:500],
        model=params.get("model", "")[:200],
        breakdown=True,
    )


def _sessions_link(query: UsageQuery, **extra: str) -> str:
    """The trace list filtered to the same agent, project and model, plus `extra`."""
    fields = {"agent": query.agent, "project": query.project, "model": query.model, **extra}
    return reverse("traces:list") + "?" + urlencode({k: v for k, v in fields.items() if v})


@access(Access.READ)
@require_safe
def usage(request: HttpRequest) -> HttpResponse:
    problems: list[str] = []
    query = _query(request.GET, problems)
    projects = None if local_mode() else principal(request).projects().values_list("pk", flat=True)
    summary = usage_summary(query=query, project_ids=projects)
    for group, key in (("by_model", "model"), ("by_agent", "agent"), ("by_project", "project")):
        for row in summary[group]:
            row["href"] = _sessions_link(query, **{key: row[key]}) if row[key] else ""
    for finding in summary["findings"]:
        finding["href"] = _sessions_link(query, rule=finding["rule"])
    figure = usage_figure(summary)
    spend = summary["totals"]["cost_usd"]
    return render(
        request,
        "traces/usage.html",
        {
            "summary": summary,
            "query": query,
            "tz_name": request.GET.get("tz") or ("local" if local_mode() else "UTC"),
            "periods": PERIODS,
            "problems": problems,
            "kinds": [(KIND_LABELS[k], v) for k, v in summary["by_kind"].items()],
            "buckets": [(BUCKET_LABELS[b], v) for b, v in summary["by_bucket"].items()],
            "input_spend": None if spend is None else spend - (summary["by_kind"]["output"] or 0),
            "figure": figure,
            "chart_themes": THEMES,
            "all_sessions": _sessions_link(query),
        },
    )
