"""The trace page's "What if" panel: its context from the stored report, and the small
JSON endpoint the panel's script calls when a parameter changes.

Both recompute the scenarios with the core (`build_what_if`) from the stored report, so
the page works without JavaScript (the form submits to the page) and with it (the
script swaps in the endpoint's server-rendered fragment and redraws two charts).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Literal

from django.http import HttpRequest, JsonResponse, QueryDict
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_safe

from traces import models
from traces.access.rules import Access, access
from traces.core.analysis.whatif import basis_from_report, build_series, build_what_if, parse_params
from traces.core.analysis.whatif.params import (
    CAP_PREFIX,
    LIFETIME_LABELS,
    Params,
    median_result,
    tool_names,
)
from traces.core.analysis.whatif.series import Series
from traces.core.outputs.page_summary import TOOLS_SHOWN, WhatIfPanel
from traces.core.outputs.render import whatif_charts
from traces.core.outputs.report_views import WhatIfView, what_if_view
from traces.core.outputs.report_views import chart_loop as report_chart_loop
from traces.pages.diagram_presenter import chart_source, whole_report_of
from traces.pages.window_figures import what_if_note
from traces.selectors.traces import trace_get
from traces.storage.report_cache import derived
from traces.storage.report_views import keeps_views, stored_view, what_if_input, what_if_name

PARAM_NAMES = ("clear_after", "cache_lifetime", "drop_unused", "batch")


def what_if_params(params: Any) -> dict[str, list[str]]:
    """The query's what-if parameters (empty: the defaults)."""
    return {key: params.getlist(key) for key in params if _ours(key)}


def what_if_context(
    trace: models.Trace,
    params: Any,
    loop: int | None,
    *,
    figures_inline: bool = True,
    panel: WhatIfPanel | Literal[False] | None = False,
    view: WhatIfView | None = None,
    report_of: Callable[[], Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The panel: every scenario with the chosen parameters, the inputs to change them,
    and the growth and cost figures with the simulated series beside the actual. Without
    `figures_inline` (a long loop) each figure is None and `what_if_figures_src` names
    this very query on `what-if.json`, which charts.js fetches. Given the default
    `panel` of a page summary (None: the report has no what-if; only for a query of no
    what-if parameters and a long loop), the report is not read; nor given the `view`
    kept beside a long report for the loop (traces.storage.report_views), which holds
    the default panel with its scenarios whole, and its figures. `report_of`: gives what
    the scenarios are computed from otherwise (the trace's report, or the what-if's
    input kept beside it, `what_if_input`), called only when this process keeps neither
    the basis nor the inputs; the trace's report when None."""
    values = what_if_params(params)
    if view is not None:
        panel = view["panel"]
    if panel is not False:
        if values or (figures_inline and view is None):
            raise ValueError("a summary's panel holds the defaults and no series")
        if panel is None:
            return {"what_if": None}
        what_if = panel["what_if"]
        chosen = Params(**panel["params"])
        tools = [
            {"name": t["name"], "field": f"{CAP_PREFIX}{t['name']}"}
            | {key: t[key] for key in ("cap", "median", "largest")}
            for t in panel["tools"]
        ]
        threshold = panel["threshold"]
        series_of: Callable[[], Series] | None = None
    else:
        # Kept per report in this process: a later query reads neither the report nor
        # the what-if's kept input (decoding the input cost a warm query 70 ms).
        source = functools.cache(report_of or (lambda: trace.report or {}))
        inputs = derived(trace, "what-if inputs", lambda: _inputs_of(source()))
        if not inputs["known"]:
            return {"what_if": None}
        basis = derived(trace, "what-if basis", lambda: basis_from_report(source()))
        chosen = parse_params(basis, _QueryValues(values) if values else None)
        what_if = build_what_if({"what_if": inputs}, chosen, basis=basis)
        cap_items = {item["tool"]: item for item in what_if["scenarios"][0]["items"]}
        tools = [
            {
                "name": name,
                "field": f"{CAP_PREFIX}{name}",
                "cap": chosen.caps.get(name),
                "median": median_result(basis, name),
                "largest": (cap_items.get(name) or {}).get("largest_result"),
            }
            for name in tool_names(basis)[:TOOLS_SHOWN]
        ]
        threshold = basis.oversized_threshold

        def series_of() -> Series:
            return build_series(basis, chosen, loop)

    return {
        "what_if": what_if,
        "scenarios": {s["id"]: s for s in what_if["scenarios"]},
        "what_if_params": chosen,
        "what_if_tools": tools,
        "what_if_threshold": threshold,
        "what_if_lifetimes": list(LIFETIME_LABELS.items()),
        **(
            {"what_if_figures": view["figures"], "what_if_figures_src": None}
            if view is not None
            else _figures(trace, params, loop, figures_inline, series_of, chosen.cache_lifetime)
        ),
        "what_if_loop": loop,
    }


def _figures(
    trace: models.Trace,
    params: Any,
    loop: int | None,
    inline: bool,
    series_of: Callable[[], Series] | None,
    lifetime: str,
) -> dict[str, Any]:
    """The two figures, or (not `inline`) where to fetch them: the series is then not
    built (on a 20,000-call loop it costs as much as the rest of the panel)."""
    if not inline:
        query = params.copy()
        if loop is not None:
            query["loop"] = str(loop)
        src = reverse("traces:what-if-json", args=[trace.pk]) + "?" + query.urlencode()
        return {
            "what_if_figures": dict.fromkeys(("whatif_growth", "whatif_cost")),
            "what_if_figures_src": src,
        }
    assert series_of is not None
    series = series_of()
    return {
        "what_if_figures": {
            "whatif_growth": whatif_charts.growth_figure(series, loop=loop),
            "whatif_cost": whatif_charts.cost_figure(series, lifetime=lifetime, loop=loop),
        },
        "what_if_figures_src": None,
    }


def _inputs_of(report: Mapping[str, Any]) -> dict[str, Any]:
    """Whether the report has a what-if (one analysed before it existed has none), and
    the inputs its scenarios read beside the basis (`build_what_if` sends them back)."""
    known = "what_if" in report
    return {"known": known, "inputs": dict((report.get("what_if") or {}).get("inputs") or {})}


def _ours(key: str) -> bool:
    return key.startswith(CAP_PREFIX) or key in PARAM_NAMES


class _QueryValues(dict):
    """A plain dict of lists that answers `getlist` like a QueryDict."""

    def getlist(self, key: str) -> list[str]:
        return list(self.get(key) or [])


@access(Access.READ)
@require_safe
def what_if_json(request: HttpRequest, trace_id) -> JsonResponse:
    """The scenarios recomputed with the query's parameters, the panel's results
    fragment (rendered and escaped by the template) and the two figures."""
    trace = trace_get(trace_id=trace_id, with_report=False)
    source = chart_source(trace)
    loop = chart_loop(source, request.GET.get("loop"))
    if keeps_views(trace) and not what_if_params(request.GET):  # kept beside the report
        view = stored_view(trace, what_if_name(loop), lambda: _what_if_view(trace, source, loop))
        context = {"what_if": None}  # analysed before what-if existed
        if view is not None:
            context = what_if_context(trace, request.GET, loop, view=view)
    else:  # other parameters: recomputed from the what-if's input, not the whole report
        context = what_if_context(trace, request.GET, loop, report_of=lambda: what_if_input(trace))
    if context["what_if"] is None:
        return JsonResponse(
            {"error": "this trace was analysed before what-if existed; run manage.py reanalyze"},
            status=409,
        )
    html = render_to_string("traces/_what_if_results.html", {"trace": trace, **context}, request)
    # The inputs as the page would draw them now: a live page whose reader changed nothing
    # takes them (the tools grow, and with them the suggested caps).
    caps = render_to_string("traces/_what_if_caps.html", context, request)
    chosen = context["what_if_params"]
    panel = {}
    if request.GET.get("panel"):  # a live page opened before the trace's first report
        panel["panel_html"] = render_to_string(
            "traces/_what_if.html",
            {"trace": trace, **context, "what_if_note": what_if_note(loop)},
            request,
        )
    return JsonResponse(
        {
            **panel,
            "what_if": context["what_if"],
            "html": html,
            "caps_html": caps,
            "params": {
                "clear_after": chosen.clear_after,
                "cache_lifetime": chosen.cache_lifetime,
                "drop_unused": chosen.drop_unused_tools,
                "batch": chosen.batch_serial_calls,
            },
            "figures": context["what_if_figures"],
        }
    )


def chart_loop(source: Mapping[str, Any], wanted: str | None) -> int | None:
    """The loop the query names when the trace has it, else the outcome's, else the first
    (`source`: the trace's report or its head, `diagram_presenter.chart_source`)."""
    try:
        number = int(wanted) if wanted else None
    except ValueError:
        number = None
    return report_chart_loop(source, number)


def _what_if_view(
    trace: models.Trace, source: Mapping[str, Any], loop: int | None
) -> WhatIfView | None:
    """The default what-if of the trace's report with the figures of `loop`, computed."""
    report = whole_report_of(trace, source)
    if "what_if" not in report:
        return None
    basis = derived(trace, "what-if basis", lambda: basis_from_report(report))
    return what_if_view(report, loop, basis=basis)


def live_what_if_figures(trace: models.Trace, loop: int | None, *, inline: bool) -> dict[str, Any]:
    """The what-if panel's two figures with the server's default parameters, for a live
    page to redraw with every report (diagram.json): before, they followed the stream
    only at the close. Empty before the first report, and for a loop too long to embed
    its figures (`inline` false: building the series costs as much as the panel)."""
    if not inline:
        return {}
    context = what_if_context(trace, QueryDict(), loop)
    if context["what_if"] is None:
        return {}
    return {key: figure for key, figure in context["what_if_figures"].items() if figure}
