"""Where the trace page reads its report from: the whole report, or, for a long trace,
its page summary and its window's parts (traces.storage.page_summary,
traces.storage.report_parts), so a 20,000-call page reads a few kilobytes and two or
three parts instead of decoding 34 MB.

Both sources answer the same questions (`PageReport`) with the facts the core computes
(traces.core.outputs.page_summary): the page built from either is the same page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from traces import models
from traces.core.outputs.page_figures import ReportDigest
from traces.core.outputs.page_summary import (
    FINDINGS_PER_PAGE,
    OTHER_TRAFFIC_SHOWN,
    AccountingFacts,
    PageSummary,
    WhatIfPanel,
    accounting_facts,
)
from traces.core.outputs.render.sequence.overview import OverviewMarks
from traces.core.outputs.render.sequence.window_parts import (
    WindowHead,
    WindowPart,
    part_number,
)
from traces.storage.page_summary import stored_page_summary
from traces.storage.report_cache import load_report
from traces.storage.report_parts import report_head, report_window_parts


@dataclass
class WindowFacts:
    """What the page's rows read of the calls they show: each call's report entry, its
    findings (each with its permalink number) and the report's tool-run entries by
    position (1-based, as `ToolRun.position`)."""

    call_reports: dict[int, Any]
    findings_by_call: dict[int, list[dict[str, Any]]]
    run_entries: Callable[[int], Any]


@dataclass
class PageReport:
    """The trace page's report: `report` holds at least its small keys (a summary's)."""

    report: Mapping[str, Any]
    accounting: AccountingFacts
    findings: Sequence[Any]
    """The findings the page may list: all of them, or a summary's first page."""
    other_traffic: Sequence[Any]
    other_traffic_count: int
    runs_not_by_id: bool
    has_calls: bool
    window_facts: Callable[[Iterable[int]], WindowFacts | None]
    """None: the calls are not all in the summary and parts (read the whole report)."""
    digest: ReportDigest | None = None
    summary: PageSummary | None = None
    head: WindowHead | None = None
    parts: dict[int, WindowPart] = field(default_factory=dict)

    def overview(self, loop: int) -> OverviewMarks | None:
        return self.summary["overview"].get(str(loop)) if self.summary else None

    def what_if(self) -> WhatIfPanel | None:
        return self.summary["what_if"] if self.summary else None


def whole_report(trace: models.Trace) -> PageReport:
    """The page's report read whole (loaded when the trace came without it)."""
    if "report" in trace.get_deferred_fields():
        load_report(trace)
    report: Mapping[str, Any] = trace.report or {}
    findings: Sequence[Any] = report.get("findings", [])
    calls: Sequence[Any] = report.get("calls", [])
    runs = report.get("tool_runs")
    entries: list[Any] = runs if isinstance(runs, list) else []
    traffic: Sequence[Any] = report.get("other_traffic", [])

    def window_facts(_indexes: Iterable[int]) -> WindowFacts:
        return WindowFacts(
            call_reports={c["index"]: c for c in calls},
            findings_by_call=findings_by_call(enumerate(findings)),
            run_entries=lambda position: (
                entries[position - 1] if 0 < position <= len(entries) else {}
            ),
        )

    return PageReport(
        report=report,
        accounting=accounting_facts(report),
        findings=findings,
        other_traffic=traffic[:OTHER_TRAFFIC_SHOWN],
        other_traffic_count=len(traffic),
        runs_not_by_id=any(r.get("pairing") for r in entries),
        has_calls=bool(calls),
        window_facts=window_facts,
    )


def findings_by_call(positioned: Iterable[tuple[int, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Findings per call, each with its position in the report (its permalink number)."""
    grouped: dict[int, list[dict[str, Any]]] = {}
    for position, finding in sorted(positioned, key=lambda item: item[0]):
        call = finding.get("call")
        if call is not None:
            grouped.setdefault(call, []).append({**finding, "number": position + 1})
    return grouped


def summary_report(trace: models.Trace) -> PageReport | None:
    """The page's report from the trace's summary and parts, or None when it has none
    (a short, live or older trace). Read even when this process keeps the report
    decoded: at 20,000 calls the page took 238 ms of CPU from the decoded report (its
    strip, accounting and window facts walk every call), 69 ms from the summary, and
    less from the summary at 600 and 2,000 calls too."""
    if trace.state == models.Trace.State.LIVE:
        return None
    summary = stored_page_summary(trace)
    head = report_head(trace) if summary is not None else None
    if summary is None or head is None:
        return None
    page = PageReport(
        report={**summary["report"], "loops": head["loops"]},
        accounting=summary["accounting"],
        findings=summary["findings_head"],
        other_traffic=summary["other_traffic"],
        other_traffic_count=summary["other_traffic_count"],
        runs_not_by_id=summary["runs_not_by_id"],
        has_calls=summary["call_count"] > 0,
        window_facts=lambda indexes: _window_facts(trace, page, indexes),
        digest=summary["digest"],
        summary=summary,
        head=head,
    )
    return page


def window_parts_of(trace: models.Trace, page: PageReport, numbers: Iterable[int]) -> bool:
    """Read the parts `numbers` into `page.parts` (those not read yet); False when any
    is missing (the report changed since the summary was read)."""
    wanted = sorted(set(numbers) - set(page.parts))
    if not wanted:
        return True
    parts = report_window_parts(trace, wanted)
    if parts is None:
        return False
    page.parts.update(zip(wanted, parts, strict=True))
    return True


def _window_facts(
    trace: models.Trace, page: PageReport, indexes: Iterable[int]
) -> WindowFacts | None:
    assert page.summary is not None
    side = page.summary["side_calls"]
    shown = set(indexes)
    numbers = {part_number(index) for index in shown if str(index) not in side}
    if any(not 0 < number <= part_number(page.summary["call_count"]) for number in numbers):
        return None
    if not window_parts_of(trace, page, numbers):
        return None
    calls: dict[int, Any] = {}
    findings: list[tuple[int, Any]] = []
    runs: dict[int, Any] = {}
    for number in numbers:
        part = page.parts[number]
        if "asked_at" not in part:  # cut before the parts kept run positions
            return None
        calls.update((int(call["index"]), call) for call in part["calls"])
        findings += [(position, finding) for position, finding in part["findings"]]
        runs.update(zip(part["asked_at"], part["asked"], strict=True))
        runs.update(zip(part.get("carried_at", []), part["carried"], strict=True))
    for index in shown:
        facts = side.get(str(index))
        if facts is not None:
            calls[index] = facts["call"]
            findings += [(position, finding) for position, finding in facts["findings"]]
            runs.update((position, run) for position, run in facts["runs"])
    if not shown <= set(calls):
        return None
    unique = {position: finding for position, finding in findings}
    return WindowFacts(
        call_reports=calls,
        findings_by_call=findings_by_call(unique.items()),
        run_entries=lambda position: runs.get(position - 1, {}),
    )


def findings_page_number(params: Any) -> int:
    try:
        return max(1, int(params.get("findings", 1)))
    except (TypeError, ValueError):
        return 1


def summary_serves(page: PageReport, params: Any, what_if_params: bool) -> bool:
    """Whether the summary answers this query: the first page of findings (or all of
    them) and the default what-if panel; other queries read the whole report."""
    assert page.summary is not None
    total = page.accounting["findings_total"]
    if findings_page_number(params) > 1 and total > FINDINGS_PER_PAGE:
        return False
    return not what_if_params
