"""Where the input tokens went, what it cost and what was found, read from a stored
report for the trace and call pages (the report is computed once, at ingest)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from traces.core.outputs import page_figures, page_summary
from traces.core.outputs.page_summary import AccountingFacts, accounting_facts
from traces.core.report_types import FindingEntry, StoredReport

BUCKET_LABELS = page_figures.BUCKET_LABELS


@dataclass(frozen=True)
class BucketRow:
    """One line of the "where the input went" table: a bucket, its tokens and share."""

    key: str
    label: str
    tokens: int
    share: float


def accounting_context(
    report: StoredReport,
    *,
    facts: AccountingFacts | None = None,
    findings: Sequence[FindingEntry] | None = None,
    call_reports: Mapping[int, Any] | None = None,
    findings_by_call: Mapping[int, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Bucket shares, cost lines, heaviest results and findings, from the stored report;
    the trace page of a long trace passes what walks its calls, runs and findings (the
    page summary's `facts`, its first `findings` and its window's calls) with the
    summary's small `report`."""
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
    facts = facts if facts is not None else accounting_facts(report)
    findings = findings if findings is not None else report.get("findings", [])
    accounting = report.get("accounting")
    if call_reports is None:
        call_reports = {c["index"]: c for c in report.get("calls", [])}
    return {
        "bucket_rows": rows,
        "input_total": input_total,
        "output_total": totals.get("output_tokens", 0),
        "output_reported": facts["output_reported"],
        "cost": totals.get("cost_usd") or {},
        "accounting": accounting or {},
        "estimated": bool(accounting and accounting.get("estimated_calls")),
        "heaviest_results": facts["heaviest_results"],
        "tools_by_resend": facts["tools_by_resend"],
        "findings": findings,
        "finding_counts": facts["finding_counts"],
        "findings_by_call": findings_by_call
        if findings_by_call is not None
        else _findings_by_call(findings),
        "call_reports": call_reports,
    }


FINDINGS_PER_PAGE = page_summary.FINDINGS_PER_PAGE
"""Findings listed on one page of the trace page: a 20,000-call loop can hold tens of
thousands (13 MB of HTML); the rest are a page link away, all in the JSON report."""


def findings_page(
    findings: Sequence[FindingEntry], params: Any, *, total: int | None = None, by_rule: Any = None
) -> dict[str, Any]:
    """The page of findings the query string's `findings` asks for (from 1), each with its
    permalink number, the links to its neighbours and the count of each rule. Given the
    `total` and the counts `by_rule` (a page summary's), `findings` may be the first
    pages only."""
    total = len(findings) if total is None else total
    pages = max(1, -(-total // FINDINGS_PER_PAGE))
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
    if by_rule is None:
        counted: dict[str, int] = defaultdict(int)
        for finding in findings:
            counted[finding["rule"]] += 1
        by_rule = sorted(counted.items(), key=lambda item: (-item[1], item[0]))

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
        "findings_by_rule": by_rule,
        "findings_total": total,
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
