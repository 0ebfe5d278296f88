"""Comparison pages: two runs side by side, two sets side by side, and the small forms
on trace and set pages that pick what to compare with."""

from __future__ import annotations

import uuid
from dataclasses import asdict
from types import MappingProxyType

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_safe

from traces import models
from traces.access.rules import Access, access, principal
from traces.core.analysis.accounting import BUCKETS
from traces.core.outputs.summary import OUTCOME_LABELS
from traces.selectors.compare import traces_comparison
from traces.selectors.notes import notes_of_traces
from traces.selectors.sets import set_get, sets_comparison
from traces.selectors.traces import trace_get

BUCKET_NAMES = MappingProxyType(
    {
        "prefix": "prefix",
        "tool_results": "tool results",
        "replayed_output": "replayed output",
        "other": "other",
    }
)


def _trace(request: HttpRequest, trace_id) -> models.Trace:
    """A trace the caller may read; 404 otherwise (as if it did not exist)."""
    trace = trace_get(trace_id=trace_id)
    if not principal(request).allows_trace(Access.READ, trace.pk, trace.project_id):
        raise Http404("No such trace")
    return trace


def _set(request: HttpRequest, set_id) -> models.RunSet:
    """A run set the caller may read; 404 otherwise."""
    run_set = set_get(set_id=set_id)
    if not principal(request).allows(Access.READ, run_set.project_id):
        raise Http404("No such run set")
    return run_set


@access(Access.READ)
@require_safe
def compare_runs(request: HttpRequest, a, b) -> HttpResponse:
    trace_a = _trace(request, a)
    trace_b = _trace(request, b)
    result = traces_comparison(trace_a, trace_b)
    notes = notes_of_traces([trace_a.pk, trace_b.pk])
    return render(
        request,
        "traces/compare.html",
        {
            "trace_a": trace_a,
            "trace_b": trace_b,
            "cmp": result,
            "buckets": [(key, BUCKET_NAMES[key]) for key in BUCKETS],
            "total_rows": _total_rows(result),
            "score_rows": _score_rows(trace_a, trace_b),
            "outcome_labels": OUTCOME_LABELS,
            "notes_a": notes[trace_a.pk],
            "notes_b": notes[trace_b.pk],
            "note_sides": [("a", trace_a, notes[trace_a.pk]), ("b", trace_b, notes[trace_b.pk])],
        },
    )


def run_scores(trace: models.Trace) -> dict[str, str]:
    """An eval run's scores by scorer (kept in its summary column: no report is loaded),
    the values of several samples joined."""
    by_scorer: dict[str, list[str]] = {}
    for score in (trace.stats or {}).get("scores") or []:
        by_scorer.setdefault(str(score.get("scorer", "")), []).append(str(score.get("value", "")))
    return {scorer: ", ".join(values) for scorer, values in by_scorer.items()}


def _score_rows(trace_a: models.Trace, trace_b: models.Trace) -> list[dict[str, str]]:
    """One row per scorer of either run (Inspect AI samples): A's value beside B's."""
    a, b = run_scores(trace_a), run_scores(trace_b)
    return [
        {"scorer": scorer, "a": a.get(scorer, ""), "b": b.get(scorer, "")}
        for scorer in dict.fromkeys([*a, *b])
    ]


def _total_rows(result: dict) -> list[dict]:
    a, b, delta = result["a"]["totals"], result["b"]["totals"], result["delta"]
    rows = [
        ("Calls", "calls", "int"),
        ("Failed calls", "failed_calls", "int"),
        ("Loops", "loops", "int"),
        ("Tool runs", "tool_runs", "int"),
        ("Input tokens", "input", "int"),
        ("Output tokens", "output", "int"),
        ("Cost", "cost", "usd"),
        ("Cost if nothing were cached", "cost_uncached", "usd"),
        ("Findings", "findings", "int"),
    ]
    out = [
        {
            "label": label,
            "key": key,
            "kind": kind,
            "a": a[key],
            "b": b[key],
            "delta": delta[key],
            "relative": delta["relative"].get(key),
        }
        for label, key, kind in rows
    ]
    for name in BUCKETS:
        out.insert(
            5 + BUCKETS.index(name),
            {
                "label": f"· {BUCKET_NAMES[name]}",
                "key": f"bucket-{name}",
                "kind": "int",
                "a": a["buckets"][name],
                "b": b["buckets"][name],
                "delta": delta["buckets"][name],
                "relative": None,
            },
        )
    return out


@access(Access.READ)
@require_safe
def compare_runs_json(request: HttpRequest, a, b) -> JsonResponse:
    trace_a, trace_b = _trace(request, a), _trace(request, b)
    result = traces_comparison(trace_a, trace_b)
    notes = notes_of_traces([trace_a.pk, trace_b.pk])
    for side, trace in (("a", trace_a), ("b", trace_b)):
        result[side] = {**result[side], "notes": [asdict(n) for n in notes[trace.pk]]}
    return JsonResponse(result, json_dumps_params={"ensure_ascii": False})


@access(Access.READ)
@require_safe
def compare_sets(request: HttpRequest, a, b) -> HttpResponse:
    set_a, set_b = _set(request, a), _set(request, b)
    return render(
        request,
        "traces/compare_sets.html",
        {"set_a": set_a, "set_b": set_b, "cmp": sets_comparison(set_a, set_b)},
    )


@access(Access.READ)
@require_safe
def compare_pick(request: HttpRequest) -> HttpResponse:
    """The compare forms' target: `?a=<trace id>&b=<trace id or name>` (or `kind=sets`).

    A missing or unknown side is a page that says what was not found, and a name that
    several runs (or sets) share lists them to pick from, instead of picking one."""
    kind = "sets" if request.GET.get("kind") == "sets" else "runs"
    first = _uuid(request.GET.get("a", ""))
    typed = request.GET.get("b_other", "")  # a trace page's free-text box wins over its menu
    second_text = " ".join((typed if typed.strip() else request.GET.get("b", "")).split())
    if first is None or not second_text:
        missing = "the first" if first is None else "the second"
        return _pick_error(request, kind, f"Choose two {kind} to compare: {missing} is missing.")
    target = "traces:compare-sets" if kind == "sets" else "traces:compare"
    second = _uuid(second_text)
    if second is not None:
        return redirect(reverse(target, args=[first, second]))
    who = principal(request)
    if kind == "sets":
        found = list(
            models.RunSet.objects.filter(
                name=second_text, project__in=who.projects().values("pk")
            ).order_by("-created_at")[:PICK_LIMIT]
        )
    else:
        found = list(
            who.traces(models.Trace.objects.filter(name=second_text)).order_by("-created_at")[
                :PICK_LIMIT
            ]
        )
    if len(found) == 1:
        return redirect(reverse(target, args=[first, found[0].pk]))
    if not found:
        noun = "run set" if kind == "sets" else "trace"
        return _pick_error(request, kind, f"No {noun} with the id or name “{second_text}”.")
    candidates = [(item, reverse(target, args=[first, item.pk])) for item in found]
    return render(
        request,
        "traces/compare_pick.html",
        {"kind": kind, "name": second_text, "candidates": candidates, "limit": PICK_LIMIT},
    )


PICK_LIMIT = 50
"""At most this many runs (or sets) sharing a name are listed to choose from."""


def _pick_error(request: HttpRequest, kind: str, message: str) -> HttpResponse:
    return render(request, "traces/compare_pick.html", {"kind": kind, "error": message}, status=404)


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        return None
