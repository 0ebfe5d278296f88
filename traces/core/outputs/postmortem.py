"""The post-mortem of a trace: what happened, where it first went wrong, what it cost.

Built from the stored report (the web never re-runs the core to show it), so the page,
the Markdown summary and the self-contained HTML export all say the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traces.core.records import dataclass, field

from .notes import Note

CONTEXT_CALLS = 2
LAST_CALLS = 5


@dataclass(frozen=True)
class PostMortem:
    name: str
    format: str
    outcome: dict[str, Any]
    first_error: dict[str, Any] | None
    calls_around_error: list[dict[str, Any]]
    error_results: list[dict[str, Any]]
    inferred_error_results: list[dict[str, Any]]
    """Results that read as failures though the format flagged nothing (kept apart)."""
    last_calls: list[dict[str, Any]]
    totals: dict[str, Any]
    cost: dict[str, Any]
    findings_by_rule: list[tuple[str, list[dict[str, Any]]]]
    line_errors: list[dict[str, Any]]
    estimated: bool
    findings_for_call: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    savings: list[dict[str, Any]] = field(default_factory=list)
    """The three largest savings of the what-if scenarios, as instructions."""
    what_if_known: bool = False
    """False for reports made before the what-if section existed."""
    notes: tuple[Note, ...] = ()
    """People's notes on the trace, root causes first (given by the caller: the core
    never reads them from storage)."""
    unpriced_models: list[str] = field(default_factory=list)
    """Models no price knew: their calls' cost is unknown (named, never a silent $0)."""

    def unpriced_words(self, name: Callable[[str], str] = str) -> str:
        """The sentence exports print when some cost is unknown (words, no link); `name`
        quotes each model name for the export's markup."""
        if not self.unpriced_models:
            return ""
        names = ", ".join(name(model) for model in self.unpriced_models)
        return (
            f"Cost unknown for {names}: no price is known for "
            f"{'this model' if len(self.unpriced_models) == 1 else 'these models'}; "
            "set one on the project's Prices page or in a price file."
        )


def build_postmortem(
    report: dict[str, Any], name: str, notes: tuple[Note, ...] | list[Note] = ()
) -> PostMortem:
    calls = report.get("calls", [])
    by_index = {call["index"]: call for call in calls}
    findings = report.get("findings", [])
    for_call: dict[int, list[dict[str, Any]]] = {}
    for finding in findings:
        if finding.get("call") is not None:
            for_call.setdefault(finding["call"], []).append(finding)
    first_error = next((f for f in findings if f["severity"] == "error"), None)
    around: list[dict[str, Any]] = []
    if first_error is not None and first_error.get("call") is not None:
        loop_calls = [c for c in calls if c["loop"] == by_index[first_error["call"]]["loop"]]
        position = next(i for i, c in enumerate(loop_calls) if c["index"] == first_error["call"])
        around = loop_calls[max(0, position - CONTEXT_CALLS) : position + CONTEXT_CALLS + 1]
    outcome = report.get("outcome", {})
    main_loop = outcome.get("loop")
    main_calls = [c for c in calls if main_loop is None or c["loop"] == main_loop]
    grouped: dict[str, list[dict[str, Any]]] = {}
    for finding in findings:
        grouped.setdefault(finding["rule"], []).append(finding)
    order = {"error": 0, "warning": 1, "info": 2}
    findings_by_rule = sorted(
        grouped.items(), key=lambda item: (order[item[1][0]["severity"]], item[0])
    )
    totals = report.get("totals", {})
    return PostMortem(
        name=name,
        format=report.get("format", ""),
        outcome=outcome,
        first_error=first_error,
        calls_around_error=around,
        error_results=[run for run in report.get("tool_runs", []) if run.get("is_error")],
        inferred_error_results=[
            run for run in report.get("tool_runs", []) if run.get("error_inferred")
        ],
        last_calls=main_calls[-LAST_CALLS:],
        totals=totals,
        cost=totals.get("cost_usd") or {},
        findings_by_rule=findings_by_rule,
        line_errors=report.get("lines", {}).get("errors", []),
        estimated=bool((report.get("accounting") or {}).get("estimated_calls")),
        findings_for_call=for_call,
        savings=list((report.get("what_if") or {}).get("top_savings") or []),
        what_if_known="what_if" in report,
        notes=tuple(sorted(notes, key=lambda note: not note.root_cause)),
        unpriced_models=list((report.get("accounting") or {}).get("unpriced_models") or []),
    )


def postmortem_source(report: dict[str, Any]) -> dict[str, Any]:
    """The part of `report` that `build_postmortem` reads, and nothing else: every finding
    and failed result, but of the calls only those it shows (around the first error and
    the last of the outcome's loop), in the report's order. Kept beside a long trace's
    report (traces.storage.report_views), it is the post-mortem's whole input: at 20,000
    calls the page decoded a 34 MB report for the few calls it shows."""
    calls = report.get("calls", [])
    findings = report.get("findings", [])
    shown: set[int] = set()
    first_error = next((f for f in findings if f["severity"] == "error"), None)
    if first_error is not None and first_error.get("call") is not None:
        wanted = first_error["call"]
        loop = next((c["loop"] for c in calls if c["index"] == wanted), None)
        loop_calls = [c["index"] for c in calls if c["loop"] == loop]
        if wanted in loop_calls:
            position = loop_calls.index(wanted)
            shown.update(
                loop_calls[max(0, position - CONTEXT_CALLS) : position + CONTEXT_CALLS + 1]
            )
    main_loop = (report.get("outcome") or {}).get("loop")
    main_calls = [c["index"] for c in calls if main_loop is None or c["loop"] == main_loop]
    shown.update(main_calls[-LAST_CALLS:])
    accounting = report.get("accounting") or {}
    source: dict[str, Any] = {
        key: report[key] for key in ("format", "outcome", "totals", "findings") if key in report
    }
    source["calls"] = [c for c in calls if c["index"] in shown]
    source["tool_runs"] = [
        run
        for run in report.get("tool_runs", [])
        if run.get("is_error") or run.get("error_inferred")
    ]
    source["lines"] = {"errors": report.get("lines", {}).get("errors", [])}
    source["accounting"] = {
        key: accounting[key] for key in ("estimated_calls", "unpriced_models") if key in accounting
    }
    if "what_if" in report:
        source["what_if"] = {"top_savings": (report["what_if"] or {}).get("top_savings") or []}
    return source
