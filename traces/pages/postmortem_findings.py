"""The post-mortem's "All findings, by rule", paged as the trace page pages its findings.

Why: a long loop's post-mortem listed every finding of every rule (tens of thousands on
a 20,000-call loop: megabytes of HTML). Each rule's group now shows FINDINGS_PER_PAGE of
its findings, with links to its neighbouring pages (`?rule=<rule>&findings=<page>`,
every other choice of the query kept) and its count; each finding keeps its permalink
number, its place in the report (traces:finding), as on the trace page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from traces.pages.accounting_presenter import FINDINGS_PER_PAGE


def rule_groups(
    findings_by_rule: Sequence[tuple[str, Sequence[dict[str, Any]]]],
    report_findings: Sequence[dict[str, Any]],
    params: Any,
) -> list[dict[str, Any]]:
    """One dict per rule, in the post-mortem's order: the page of its findings shown (each
    with its permalink number), the range shown, the links to its neighbouring pages,
    and whether the group opens (the first one, or the one the query pages)."""
    numbers: dict[str, list[int]] = {}
    for number, finding in enumerate(report_findings, start=1):
        numbers.setdefault(finding["rule"], []).append(number)
    paged_rule = params.get("rule")
    groups = []
    for position, (rule, found) in enumerate(findings_by_rule):
        pages = max(1, -(-len(found) // FINDINGS_PER_PAGE))
        page = _page_number(params.get("findings")) if rule == paged_rule else 1
        page = min(pages, page)
        offset = (page - 1) * FINDINGS_PER_PAGE
        rule_numbers = numbers.get(rule, [])
        shown = [
            {**finding, "number": number}
            for finding, number in zip(
                found[offset : offset + FINDINGS_PER_PAGE],
                rule_numbers[offset : offset + FINDINGS_PER_PAGE],
                strict=False,
            )
        ]
        groups.append(
            {
                "rule": rule,
                "severity": found[0]["severity"] if found else "info",
                "count": len(found),
                "shown": shown,
                "paged": pages > 1,
                "first": offset + 1,
                "last": offset + len(shown),
                "previous_href": _href(params, rule, page - 1, position) if page > 1 else None,
                "next_href": _href(params, rule, page + 1, position) if page < pages else None,
                "open": rule == paged_rule if paged_rule in numbers else position == 0,
                "anchor": f"rule-{position + 1}",
            }
        )
    return groups


def _page_number(value: Any) -> int:
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1


def _href(params: Any, rule: str, page: int, position: int) -> str:
    query = params.copy()  # a QueryDict: every other choice of the page kept
    query["rule"] = rule
    query["findings"] = str(page)
    return f"?{query.urlencode()}#rule-{position + 1}"
