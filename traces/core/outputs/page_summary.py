"""What the trace page reads of a long report besides its diagram window, small enough to
store beside the report and read per request: at 20,000 calls the page decoded a 34 MB
report (too large for the report cache) to print figures that fit in a few kilobytes.

A summary holds the report's small keys (totals, accounting, loops, outcome, notes,
scores, what-if), the figures the page computes by walking every call, run or finding
(the "where the tokens went" facts, finding counts and the first page of findings, the
overview strip's marks of each loop at the strip's resolution), the default what-if
panel, and the rows the page lists outside any window (the first side calls, the first
other traffic). The page draws the rest (its window's calls, runs and findings) from the
window parts (render/sequence/window_parts.py). The page's presenters compute the same
facts from a whole report with the same functions, so both sources print the same page
(tests/web/test_page_summary.py compares them).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from traces.core.analysis.whatif import Basis, basis_from_report, build_what_if, parse_params
from traces.core.analysis.whatif.params import Params, median_result, tool_names

from .page_figures import ReportDigest, report_digest
from .render.sequence.index import DiagramIndex, diagram_index
from .render.sequence.overview import OverviewMarks, overview_marks

SUMMARY_VERSION = 1
"""Bumped when the summary's shape changes, and when anything it holds is computed
differently (`accounting_facts`, the default what-if panel, `overview_marks`,
`report_digest`): the whole-report path computes those on every view with the running
code, so a summary made by older code would print other figures than a short trace's
page. A summary of another version is not read (the page reads the whole report)."""
HEAVY_KEYS = ("calls", "tool_runs", "findings", "other_traffic", "parallel_batches", "loops")
"""The report's keys that grow with its calls: never copied into a summary (the loops
are the window head's, which the page reads too; the page lists no parallel batch)."""
FINDINGS_PER_PAGE = 50
"""Findings listed on one page of the trace page (the summary keeps the first page)."""
OTHER_TRAFFIC_SHOWN = 500
"""Non-model HTTP interactions listed on the trace page (the report keeps them all)."""
SIDE_CALLS_SHOWN = 200
"""Single-call loops listed on the trace page (the first, by call index)."""
TOOLS_SHOWN = 20
"""Tools the what-if panel offers a cap for."""


class AccountingFacts(TypedDict):
    """What the page's accounting tables take from every run, call and finding."""

    output_reported: bool
    heaviest_results: list[Any]
    tools_by_resend: list[Any]
    finding_counts: dict[str, int]
    findings_total: int
    findings_by_rule: list[Any]


class CallFacts(TypedDict):
    """A call the page lists outside the window: its report entry, its findings (with
    their positions in the report) and the runs it asked or carried (with theirs)."""

    call: Any
    findings: list[Any]
    runs: list[Any]


class WhatIfPanel(TypedDict):
    """The what-if panel with the default parameters (a page without a what-if query)."""

    what_if: Any
    params: dict[str, Any]
    tools: list[dict[str, Any]]
    threshold: Any


class PageSummary(TypedDict):
    version: int
    report: dict[str, Any]
    call_count: int
    digest: ReportDigest
    accounting: AccountingFacts
    findings_head: list[Any]
    other_traffic: list[Any]
    other_traffic_count: int
    runs_not_by_id: bool
    side_calls: dict[str, CallFacts]
    overview: dict[str, OverviewMarks]
    what_if: WhatIfPanel | None


def accounting_facts(report: Mapping[str, Any]) -> AccountingFacts:
    """The heaviest results, tools by re-send cost and finding counts: the accounting
    tables' figures that walk every run and finding."""
    runs: Sequence[Mapping[str, Any]] = report.get("tool_runs") or []
    heaviest = heapq.nsmallest(  # = sorted(...)[:10], without sorting every run
        10,
        (r for r in runs if r.get("resend_tokens")),
        key=lambda r: (-r["resend_tokens"], r["id"]),
    )
    by_tool: dict[str, dict[str, int]] = {}
    for run in runs:
        entry = by_tool.setdefault(run.get("name") or "?", {"runs": 0, "resend_tokens": 0})
        entry["runs"] += 1
        entry["resend_tokens"] += run.get("resend_tokens") or 0
    findings: Sequence[Mapping[str, Any]] = report.get("findings") or []
    counts = {level: 0 for level in ("error", "warning", "info")}
    by_rule: dict[str, int] = defaultdict(int)
    for finding in findings:
        counts[finding["severity"]] = counts.get(finding["severity"], 0) + 1
        by_rule[finding["rule"]] += 1
    calls: Sequence[Mapping[str, Any]] = report.get("calls") or []
    return {
        # No call reporting its output: "not reported", never a count of 0.
        "output_reported": any(c.get("output_tokens") is not None for c in calls),
        "heaviest_results": list(heaviest),
        "tools_by_resend": sorted(by_tool.items(), key=lambda item: -item[1]["resend_tokens"])[:10],
        "finding_counts": counts,
        "findings_total": len(findings),
        "findings_by_rule": sorted(by_rule.items(), key=lambda item: (-item[1], item[0])),
    }


def default_what_if(
    report: Mapping[str, Any], *, current: bool = False, basis: Basis | None = None
) -> WhatIfPanel | None:
    """The what-if panel's scenarios and inputs with the default parameters, without the
    scenarios' per-call figures (see `default_panel`; `basis`: the report's, if built)."""
    if "what_if" not in report:
        return None
    panel, _ = default_panel(report, basis or basis_from_report(report), current=current)
    return {**panel, "what_if": without_scenario_calls(panel["what_if"])}


def default_panel(
    report: Mapping[str, Any], basis: Basis, *, current: bool = False
) -> tuple[WhatIfPanel, Params]:
    """The what-if panel with the default parameters (its scenarios whole) and those
    parameters, for a report that has a what-if; `basis` is the report's.

    `current`: `report` was just made by this code's `build_report`, whose `what_if` is
    `build_what_if(report)` with the defaults: it is taken as it is when its parameters
    are the defaults, not computed a second time (a third of storing a long trace's
    parts). A report read back from storage may hold an older version's scenarios, which
    the page would not print: it is always computed again."""
    chosen = parse_params(basis, None)
    what_if = report["what_if"]
    reusable = isinstance(what_if, Mapping) and what_if.get("parameters") == chosen.as_dict()
    if not (current and reusable):
        what_if = build_what_if(report, chosen, basis=basis)
    cap_items = {item["tool"]: item for item in what_if["scenarios"][0]["items"]}
    panel: WhatIfPanel = {
        "what_if": what_if,
        "params": chosen.as_dict(),
        "tools": [
            {
                "name": name,
                "cap": chosen.caps.get(name),
                "median": median_result(basis, name),
                "largest": (cap_items.get(name) or {}).get("largest_result"),
            }
            for name in tool_names(basis)[:TOOLS_SHOWN]
        ],
        "threshold": basis.oversized_threshold,
    }
    return panel, chosen


def without_scenario_calls(what_if: Any) -> Any:
    """A what-if result without its scenarios' per-call figures (the charts' series, which
    the page fetches from what-if.json and never prints)."""
    if not isinstance(what_if, Mapping) or not isinstance(what_if.get("scenarios"), list):
        return what_if
    scenarios = [
        {key: value for key, value in scenario.items() if key != "calls"}
        if isinstance(scenario, Mapping)
        else scenario
        for scenario in what_if["scenarios"]
    ]
    return {**what_if, "scenarios": scenarios}


def side_call_facts(report: Mapping[str, Any]) -> dict[str, CallFacts]:
    """The first `SIDE_CALLS_SHOWN` single-call loops' calls, with their findings and runs."""
    singles = sorted(
        int(loop["calls"][0]) for loop in report.get("loops") or () if len(loop["calls"]) == 1
    )[:SIDE_CALLS_SHOWN]
    facts: dict[int, CallFacts] = {}
    calls = {int(call["index"]): call for call in report.get("calls") or ()}
    for index in singles:
        if index in calls:
            facts[index] = {"call": calls[index], "findings": [], "runs": []}
    for position, finding in enumerate(report.get("findings") or ()):
        if finding.get("call") in facts:
            facts[finding["call"]]["findings"].append([position, finding])
    for position, run in enumerate(report.get("tool_runs") or ()):
        for end in {run.get("call"), run.get("result_call")}:
            if end in facts:
                facts[end]["runs"].append([position, run])
    return {str(index): entry for index, entry in facts.items()}


def loop_overviews(
    report: Mapping[str, Any], index: DiagramIndex | None = None
) -> dict[str, OverviewMarks]:
    """Each loop's overview strip marks (loops of more than one call: a single call's
    loop is drawn from the whole report). Read from each loop's own call list: looking
    each loop up again (`sequence_window`) made 8,000 short loops take 8.6 s. `index`:
    the report's `diagram_index` when the caller has it (the window head needs it too)."""
    index = index or diagram_index(report)
    marks: dict[str, OverviewMarks] = {}
    for loop in report.get("loops") or ():
        calls = loop.get("calls") or ()
        if len(calls) > 1:
            marks[str(int(loop["index"]))] = overview_marks(tuple(int(c) for c in calls), index)
    return marks


def page_summary(
    report: Mapping[str, Any],
    *,
    index: DiagramIndex | None = None,
    current: bool = False,
    basis: Basis | None = None,
) -> PageSummary:
    """The summary of `report` the trace page reads instead of it (see the module).
    `index` and `basis`: the report's `diagram_index` and what-if basis, when the caller
    built them already; `current`: the report is `build_report`'s, just made (see
    `default_panel`). None changes the summary, only what is computed twice."""
    facts = accounting_facts(report)
    traffic: Sequence[Any] = report.get("other_traffic") or []
    runs = report.get("tool_runs")
    return {
        "version": SUMMARY_VERSION,
        "report": {
            key: without_scenario_calls(value) if key == "what_if" else value
            for key, value in report.items()
            if key not in HEAVY_KEYS
        },
        "call_count": len(report.get("calls") or ()),
        "digest": report_digest(report, keys=False),
        "accounting": facts,
        "findings_head": list((report.get("findings") or [])[:FINDINGS_PER_PAGE]),
        "other_traffic": list(traffic[:OTHER_TRAFFIC_SHOWN]),
        "other_traffic_count": len(traffic),
        "runs_not_by_id": any(r.get("pairing") for r in runs) if isinstance(runs, list) else False,
        "side_calls": side_call_facts(report),
        "overview": loop_overviews(report, index),
        "what_if": default_what_if(report, current=current, basis=basis),
    }
