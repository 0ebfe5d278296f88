"""Reads and page contexts of run sets: outcomes, findings by rule across runs,
distributions, the slowest tools and heaviest results, and two sets compared.

Everything comes from the runs' summary columns, their `stats` and their per-rule rows,
never from whole reports, so a set of hundreds of runs opens quickly.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db.models import Count, Sum
from django.http import Http404
from django.urls import reverse
from django.utils.http import urlencode

from traces import models
from traces.core.outputs.compare import RunPoint, compare_sets
from traces.core.outputs.render import charts as render_charts
from traces.core.outputs.render.set_charts import MEASURES, RunValue, distribution_figure
from traces.core.outputs.summary import OUTCOME_LABELS
from traces.web.id_paths import paths_by_id

SET_COLUMNS = (
    "id",
    "name",
    "state",
    "calls_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
    "model",
    "outcome_kind",
    "started_at",
    "ended_at",
    "stats",
    "flags_count",
    "run_set",  # the related manager sets it on each run: without it, one query per run
)
TOP = 10


def set_get(*, set_id: Any) -> models.RunSet:
    try:
        return models.RunSet.objects.get(pk=set_id)
    except (models.RunSet.DoesNotExist, ValueError) as exc:
        raise Http404("No such run set") from exc


def set_list(*, projects: Any = None) -> list[models.RunSet]:
    """Every set (or those of `projects`, a queryset of project ids) with its run count."""
    sets = models.RunSet.objects.all()
    if projects is not None:
        sets = sets.filter(project__in=projects)
    return list(sets.annotate(run_count=Count("runs")).order_by("-created_at"))


def outcome_key(trace: models.Trace) -> str:
    return "live" if trace.state == models.Trace.State.LIVE else (trace.outcome_kind or "unknown")


def outcome_rows(runs: list[models.Trace]) -> list[dict[str, Any]]:
    """Counts and shares of each outcome, in the usual order, for the bar and its legend."""
    counts = Counter(outcome_key(run) for run in runs)
    order = [*OUTCOME_LABELS, "live"]
    labels = {**OUTCOME_LABELS, "live": "Live"}
    total = len(runs) or 1
    return [
        {
            "kind": kind,
            "label": labels.get(kind, kind),
            "count": counts[kind],
            "share": round(100 * counts[kind] / total, 1),
            "filter": "halted" if kind == "halted_on_tool_use" else kind,
        }
        for kind in sorted(counts, key=lambda k: order.index(k) if k in order else 99)
    ]


def rule_rows(run_set: models.RunSet) -> list[dict[str, Any]]:
    """Each rule that fired in the set: in how many runs, how many findings, its link."""
    rows = (
        models.TraceRule.objects.filter(trace__run_set=run_set)
        .values("rule", "severity")
        .annotate(runs=Count("trace", distinct=True), findings=Sum("count"))
        .order_by("-runs", "rule")
    )
    base = reverse("traces:set", args=[run_set.pk])
    return [row | {"href": f"{base}?{urlencode({'rule': row['rule']})}#runs-title"} for row in rows]


def _wall_time(run: models.Trace) -> float | None:
    return run.wall_time_s


def distributions(runs: list[models.Trace], theme: str = "light") -> dict[str, Any]:
    figures = {}
    urls = paths_by_id("traces:detail", (run.pk for run in runs))
    for key, title, unit, value_format in MEASURES:
        values = []
        for run in runs:
            if key == "cost":
                value = run.cost_usd
            elif key == "calls":
                value = run.calls_count
            elif key == "input_tokens":
                value = run.total_input_tokens
            else:
                value = _wall_time(run)
            if value is not None:
                values.append(RunValue(run.name, urls[run.pk], value))
        figure = distribution_figure(values, title, unit, value_format, theme)  # type: ignore[arg-type]
        if figure is not None:
            figures[key] = figure
    return figures


def heaviest_results(runs: list[models.Trace]) -> list[dict[str, Any]]:
    rows = [
        {**entry, "run": run}
        for run in runs
        for entry in (run.stats or {}).get("heaviest_results", [])
    ]
    rows.sort(key=lambda r: -r["value"])
    return rows[:TOP]


def slowest_tools(runs: list[models.Trace]) -> list[dict[str, Any]]:
    """Per tool name across the set: runs, errors, mean and max seconds, mean result size."""
    tools: dict[str, dict[str, Any]] = {}
    for run in runs:
        for name, entry in ((run.stats or {}).get("tools") or {}).items():
            total = tools.setdefault(
                name,
                {
                    "name": name,
                    "runs": 0,
                    "errors": 0,
                    "seconds": 0.0,
                    "timed": False,
                    "max_seconds": None,
                    "max_run": None,
                    "result_tokens": 0,
                    "sized": 0,
                    "in_runs": 0,
                },
            )
            total["runs"] += entry["runs"]
            total["errors"] += entry["errors"]
            total["in_runs"] += 1
            total["result_tokens"] += entry["result_tokens"]
            total["sized"] += entry["sized"]
            if entry.get("max_seconds") is not None:
                total["timed"] = True
                total["seconds"] += entry["seconds"]
                if total["max_seconds"] is None or entry["max_seconds"] > total["max_seconds"]:
                    total["max_seconds"], total["max_run"] = entry["max_seconds"], run
    rows = list(tools.values())
    for row in rows:
        row["mean_seconds"] = row["seconds"] / row["runs"] if row["timed"] else None
        row["mean_result_tokens"] = row["result_tokens"] / row["sized"] if row["sized"] else None
        row["error_rate"] = 100 * row["errors"] / row["runs"] if row["runs"] else 0
    rows.sort(
        key=lambda r: (
            -(r["max_seconds"] or 0),
            -(r["mean_result_tokens"] or 0),
            r["name"],
        )
    )
    return rows[:TOP]


SCORED_RUNS_NAMED = 5
"""Runs linked per score on a set page (the count says how many there are)."""


def score_rows(runs: list[models.Trace]) -> list[dict[str, Any]]:
    """Per scorer and value across the set's eval runs (Inspect AI samples): how many runs
    scored it, and the first of them to open; most common first within a scorer."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for run in runs:
        for score in (run.stats or {}).get("scores") or []:
            key = (str(score.get("scorer", "")), str(score.get("value", "")))
            row = rows.setdefault(key, {"scorer": key[0], "value": key[1], "runs": []})
            if not row["runs"] or row["runs"][-1] is not run:
                row["runs"].append(run)
    ordered = sorted(rows.values(), key=lambda r: (r["scorer"], -len(r["runs"]), r["value"]))
    return [
        {
            **row,
            "count": len(row["runs"]),
            "named": row["runs"][:SCORED_RUNS_NAMED],
            "more": max(0, len(row["runs"]) - SCORED_RUNS_NAMED),
        }
        for row in ordered
    ]


def set_runs(run_set: models.RunSet) -> list[models.Trace]:
    return list(run_set.runs.only(*SET_COLUMNS).order_by("created_at", "pk"))


def set_context(run_set: models.RunSet, *, projects: Any = None) -> dict[str, Any]:
    """A set page's context; the sets it may be compared with come from `projects` only
    (None: every project, local mode)."""
    runs = set_runs(run_set)
    others = models.RunSet.objects.exclude(pk=run_set.pk)
    if projects is not None:
        others = others.filter(project__in=projects)
    costs = [run.cost_usd for run in runs if run.cost_usd is not None]
    return {
        "run_set": run_set,
        "runs_total": len(runs),
        "total_cost": sum(costs) if costs else None,
        "priced_runs": len(costs),
        "unpriced_models": sorted(
            {run.model for run in runs if run.cost_usd is None and run.model}
        ),
        "outcomes": outcome_rows(runs),
        "scores": score_rows(runs),
        "rules": rule_rows(run_set),
        "figures": distributions(runs),
        "chart_keys": [key for key, *_ in MEASURES],
        "chart_themes": render_charts.THEMES,
        "heaviest": heaviest_results(runs),
        "tools": slowest_tools(runs),
        "files": list(run_set.files.only("filename", "raw_bytes", "runs", "created_at")),
        "other_sets": list(others.order_by("-created_at").values_list("pk", "name")[:200]),
    }


def run_points(run_set: models.RunSet) -> list[RunPoint]:
    runs = set_runs(run_set)
    fired: dict[Any, set[str]] = {}
    for trace_id, rule in models.TraceRule.objects.filter(trace__run_set=run_set).values_list(
        "trace_id", "rule"
    ):
        fired.setdefault(trace_id, set()).add(rule)
    return [
        RunPoint(
            outcome=outcome_key(run),
            calls=run.calls_count,
            input_tokens=run.total_input_tokens,
            output_tokens=run.output_tokens,
            cost=run.cost_usd,
            rules=frozenset(fired.get(run.pk, ())),
        )
        for run in runs
    ]


def sets_comparison(a: models.RunSet, b: models.RunSet) -> dict[str, Any]:
    result = compare_sets(run_points(a), run_points(b))
    labels = {**OUTCOME_LABELS, "live": "Live"}
    for row in result["outcomes"]:
        row["label"] = labels.get(row["key"], row["key"])
    return result
