"""Lint across many runs: how many runs each rule fired in, and the outcomes, as numbers
and as text for `manage.py lint` over several files or a run set."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from traces.core.records import dataclass

from ..analysis.rules.base import SEVERITY_ORDER, Finding
from .summary import OUTCOME_LABELS


@dataclass(frozen=True, slots=True)
class LintedRun:
    uri: str
    outcome: str
    findings: Sequence[Finding]


def aggregate(runs: Iterable[LintedRun]) -> dict[str, Any]:
    """Per rule: its severity, the runs it fired in (and their uris) and its findings;
    per outcome: how many runs ended so. Rules in order of severity, then most runs."""
    runs = list(runs)
    rules: dict[str, dict[str, Any]] = {}
    outcomes: dict[str, int] = {}
    for run in runs:
        outcomes[run.outcome] = outcomes.get(run.outcome, 0) + 1
        for finding in run.findings:
            entry = rules.setdefault(
                finding.rule,
                {"rule": finding.rule, "severity": finding.severity, "runs": [], "findings": 0},
            )
            entry["findings"] += 1
            if run.uri not in entry["runs"]:
                entry["runs"].append(run.uri)
    ordered = sorted(
        rules.values(),
        key=lambda r: (SEVERITY_ORDER.get(r["severity"], 9), -len(r["runs"]), r["rule"]),
    )
    return {
        "runs": len(runs),
        "runs_with_findings": sum(1 for run in runs if run.findings),
        "outcomes": outcomes,
        "rules": [{**r, "run_count": len(r["runs"])} for r in ordered],
    }


def render_aggregate(summary: dict[str, Any], title: str = "") -> str:
    total = summary["runs"]
    lines = [
        f"{title or 'All runs'}: {total} run{'s' if total != 1 else ''}, "
        f"{summary['runs_with_findings']} with findings"
    ]
    outcome_text = ", ".join(
        f"{OUTCOME_LABELS.get(kind, kind)} {count}"
        for kind, count in sorted(summary["outcomes"].items(), key=lambda kv: -kv[1])
    )
    lines.append(f"  outcomes  {outcome_text}")
    if not summary["rules"]:
        lines.append("  no rule fired")
    width = max((len(r["rule"]) for r in summary["rules"]), default=0)
    for rule in summary["rules"]:
        lines.append(
            f"  {rule['rule']:<{width}}  {rule['severity']:<7}  fired in "
            f"{rule['run_count']} of {total} run{'s' if total != 1 else ''}  "
            f"({rule['findings']} finding{'s' if rule['findings'] != 1 else ''})"
        )
    return "\n".join(lines) + "\n"
