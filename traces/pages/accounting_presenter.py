"""Where the input tokens went, what it cost and what was found, read from a stored
report for the trace and call pages (the report is computed once, at ingest)."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from traces.core.outputs import page_figures
from traces.core.report_types import FindingEntry, StoredReport

BUCKET_LABELS = page_figures.BUCKET_LABELS


@dataclass(frozen=True)
class BucketRow:
    """One line of the "where the input went" table: a bucket, its tokens and share."""

    key: str
    label: str
    tokens: int
    share: float


def accounting_context(report: StoredReport) -> dict[str, Any]:
    """Bucket shares, cost lines, heaviest results and findings, from the stored report."""
    # Stored reports come from the database: read defensively, a key may be missing.
    totals: Mapping[str, Any] = report.get("totals") or {}
    buckets: Mapping[str, int] = totals.get("buckets") or {}
    input_total = sum(buckets.values()) or 0
    rows = [
        BucketRow(
            key=key,
            label=BUCKET_LABELS[key],
            tokens=buckets.get(key, 0),
            share=(100 * buckets.get(key, 0) / input_total) if input_total else 0,
        )
        for key in BUCKET_LABELS
    ]
    runs = report.get("tool_runs", [])
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
    findings = report.get("findings", [])
    counts = {level: 0 for level in ("error", "warning", "info")}
    for finding in findings:
        counts[finding["severity"]] = counts.get(finding["severity"], 0) + 1
    calls = report.get("calls", [])
    accounting = report.get("accounting")
    return {
        "bucket_rows": rows,
        "input_total": input_total,
        "output_total": totals.get("output_tokens", 0),
        # No call reporting its output: "not reported", never a count of 0.
        "output_reported": any(c.get("output_tokens") is not None for c in calls),
        "cost": totals.get("cost_usd") or {},
        "accounting": accounting or {},
        "estimated": bool(accounting and accounting.get("estimated_calls")),
        "heaviest_results": heaviest,
        "tools_by_resend": sorted(by_tool.items(), key=lambda item: -item[1]["resend_tokens"])[:10],
        "findings": findings,
        "finding_counts": counts,
        "findings_by_call": _findings_by_call(findings),
        "call_reports": {c["index"]: c for c in calls},
    }


FINDINGS_PER_PAGE = 50
"""Findings listed on one page of the trace page: a 20,000-call loop can hold tens of
thousands (13 MB of HTML); the rest are a page link away, all in the JSON report."""


def findings_page(findings: Sequence[FindingEntry], params: Any) -> dict[str, Any]:
    """The page of findings the query string's `findings` asks for (from 1), each with its
    permalink number, the links to its neighbours and the count of each rule."""
    pages = max(1, -(-len(findings) // FINDINGS_PER_PAGE))
    try:
        page = min(pages, max(1, int(params.get("findings", 1))))
    except (TypeError, ValueError):
        page = 1
    offset = (page - 1) * FINDINGS_PER_PAGE
    shown = [
        {**finding, "number": number}
        for number, finding in enumerate(
            findings[offset : offset + FINDINGS_PER_PAGE], start=offset + 1
        )
    ]
    by_rule: dict[str, int] = defaultdict(int)
    for finding in findings:
        by_rule[finding["rule"]] += 1

    def href(number: int) -> str:
        query = params.copy()  # a QueryDict: every other choice of the page kept
        query["findings"] = str(number)
        return f"?{query.urlencode()}#findings-title"

    return {
        "findings_shown": shown,
        "findings_paged": pages > 1,
        "findings_first": offset + 1,
        "findings_last": offset + len(shown),
        "findings_previous_href": href(page - 1) if page > 1 else None,
        "findings_next_href": href(page + 1) if page < pages else None,
        "findings_by_rule": sorted(by_rule.items(), key=lambda item: (-item[1], item[0])),
        "findings_per_page": FINDINGS_PER_PAGE,
    }


def _findings_by_call(findings: Sequence[FindingEntry]) -> dict[int, list[dict[str, Any]]]:
    """Findings per call, each with its position in the report (its permalink number)."""
    grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for number, finding in enumerate(findings, start=1):
        call = finding.get("call")
        if call is not None:
            grouped[call].append({**finding, "number": number})
    return dict(grouped)
