"""The answers of a long trace's JSON endpoints that walk its whole report: a loop's
charts (figures.json, diagram.json) and its default what-if (what-if.json without
parameters). Computed here from the report, once, and kept beside it by the web
(traces.storage.report_views): at 20,000 calls each took 0.2-0.3 s of CPU a request
warm, and decoding the 34 MB report for them some 0.6 s more cold.

The web computes the same answers with these functions when it does not keep them (a
short or live trace), so either way a request is answered with the same JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from traces.core.analysis.whatif import Basis, basis_from_report, build_series
from traces.core.analysis.whatif.params import Params

from .page_summary import WhatIfPanel, default_panel
from .render import figures as render_figures
from .render import whatif_charts
from .render.chart_style import Figure

VIEWS_VERSION = 1
"""Bumped when a view's shape changes, or anything it holds is computed differently
(the charts, the what-if scenarios, series or figures): a view made by older code is
then not read, but computed again with the running code (as a short trace's always is)."""


class WhatIfView(TypedDict):
    """The what-if panel with the default parameters, its scenarios whole (each call's
    figures included: what-if.json sends them), and its two figures for one loop."""

    panel: WhatIfPanel
    figures: dict[str, Figure | None]


def loop_figures(report: Mapping[str, Any], loop: int | None) -> dict[str, Figure | None]:
    """The trace page's charts of `loop` (None: every call), as figures.json sends them."""
    return render_figures(report, theme="light", loop=loop)


def chart_loop(report: Mapping[str, Any], wanted: int | None = None) -> int | None:
    """The loop `wanted` names when the report has it, else the outcome's, else the first
    (None: the report has no loop): the loop the charts draw."""
    loops = [entry["index"] for entry in report.get("loops") or ()]
    if wanted in loops:
        return wanted
    default = (report.get("outcome") or {}).get("loop")
    return default if default in loops else (loops[0] if loops else None)


def what_if_view(
    report: Mapping[str, Any],
    loop: int | None,
    *,
    basis: Basis | None = None,
    current: bool = False,
) -> WhatIfView | None:
    """The default what-if of `report` with the figures of `loop`, or None when the report
    has no what-if (analysed before it existed). `basis`: the report's, when the caller
    keeps one; `current`: the report was just built (see `page_summary.default_what_if`)."""
    if "what_if" not in report:
        return None
    basis = basis or basis_from_report(report)
    panel, chosen = default_panel(report, basis, current=current)
    return {"panel": panel, "figures": what_if_figures(basis, chosen, loop)}


def what_if_figures(basis: Basis, chosen: Params, loop: int | None) -> dict[str, Figure | None]:
    """The what-if panel's two figures: the loop's growth and cost, actual and simulated."""
    series = build_series(basis, chosen, loop)
    return {
        "whatif_growth": whatif_charts.growth_figure(series, loop=loop),
        "whatif_cost": whatif_charts.cost_figure(series, lifetime=chosen.cache_lifetime, loop=loop),
    }
