"""The trace page's summary figures as data: its cards, outcome line, token table,
findings counts and what-if figures, each number with the text the page shows for it.

The page's first paint (traces/templates/traces/detail.html) and a live viewer (the
"state" event, traces/live/events.py; static/js/live_figures.js) both read this one
shape, so a page that followed a live trace shows what a reload shows, to the character:
the browser never formats a figure itself, it puts these strings in place (as text:
some hold trace text, a model's name or an outcome).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypedDict
from urllib.parse import quote

from traces.core import formatting


class TraceCounts(TypedDict):
    """What the trace's own row holds (set at each append, before any report)."""

    calls: int
    failed_calls: int
    tool_runs: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    lines: int
    line_errors: int
    wall_time_s: float | None


class Part(TypedDict):
    """A piece of text, a link when `href` is set (a fragment of the page itself)."""

    text: str
    href: str | None


class Badge(TypedDict):
    css: str
    text: str
    title: str


class Card(TypedDict):
    """One card of the page's head: `<dd title>text badges<span class="stat-note">`."""

    key: str
    label: str
    text: str
    title: str
    badges: list[Badge]
    badges_href: str | None
    empty: str
    """Shown (as "ok" text) instead of the badges when there is nothing to count."""
    note: list[Part]
    note_title: str


class OutcomeFigure(TypedDict):
    kind: str
    running: bool
    strong: str
    rest: str
    call: int | None


class BucketFigure(TypedDict):
    key: str
    label: str
    tokens: int
    tokens_text: str
    tokens_title: str
    share_text: str
    bar_width: str


class TokenFigures(TypedDict):
    rows: list[BucketFigure]
    input_total: str
    output_total: str
    actual: str
    uncached: str
    prefix_cached: str
    note: str
    unpriced: list[dict[str, str]]
    """The models no price is known for, each with its name as a URL query value (as
    Django's urlencode writes it) for the link that sets its price."""


class ScenarioCells(TypedDict):
    """A what-if scenario's row as the panel shows it (templates/_what_if_results.html)."""

    id: str
    status: str
    title: str
    tokens_saved: str
    usd_saved: str
    percent_usd: str
    seconds_saved: str


class WhatIfFigures(TypedDict):
    scenarios: list[ScenarioCells]
    top_savings: list[dict[str, str]]


class FindingFigures(TypedDict):
    counts: dict[str, int]
    total: int
    order: list[str]
    """Every finding's key (rule|call|tool call id|loop), in the report's order."""
    rule_count: int


class PageFigures(TypedDict):
    cards: list[Card]
    outcome: OutcomeFigure
    tokens: TokenFigures
    findings: FindingFigures
    what_if: WhatIfFigures | None


BUCKET_LABELS = MappingProxyType(
    {
        "prefix": "Prefix (system + tools + first user message), re-sent every call",
        "tool_results": "Tool results, re-sent on every later call",
        "replayed_output": "The model's own earlier messages, replayed",
        "other": "Later user turns and the rest",
    }
)
"""The input buckets of the token table, in its order."""

CARD_LABELS = MappingProxyType(
    {
        "calls": "Calls",
        "tool_runs": "Tool runs",
        "input": "Input tokens",
        "output": "Output tokens",
        "cost": "Cost",
        "findings": "Findings",
        "wall": "Wall time",
    }
)

SEVERITIES = (("error", "badge-error"), ("warning", "badge-warn"), ("info", "badge-info"))

RUNNING_STRONG = "Running: the loop is still being recorded."
RUNNING_REST = "The outcome is decided when the trace closes."


def _plural(number: int, word: str, plural: str | None = None) -> str:
    return formatting.plural(number, word, plural or "")


def _part(text: str, href: str | None = None) -> Part:
    return {"text": text, "href": href}


def finding_key(finding: Mapping[str, Any]) -> str:
    """A finding's key, as the page's `data-key` and live.js's findingKey write it."""
    return "|".join(
        "" if finding.get(name) is None else str(finding.get(name))
        for name in ("rule", "call", "tool_call_id", "loop")
    )


def loop_counts(loops: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(agent loops, side calls): a side call is a loop of one call; a trace made only of
    those is one loop of calls (as the page lists it)."""
    sizes = [len(loop.get("calls") or []) for loop in loops]
    agent = sum(1 for size in sizes if size > 1)
    side = sum(1 for size in sizes if size == 1)
    if not agent and side:
        return 1, 0
    return agent, side


class ReportDigest(TypedDict):
    """What the figures take from every finding and call of a report: kept in the page
    summary (traces.core.outputs.page_summary) so the page prints them without it."""

    severity_counts: dict[str, int]
    findings_total: int
    finding_keys: list[str] | None
    """None in a page summary: the page never prints the order (a live page's script
    reads it from the "state" event, which is built from the whole report)."""
    output_reported: bool


def report_digest(report: Mapping[str, Any], *, keys: bool = True) -> ReportDigest:
    findings: Sequence[Mapping[str, Any]] = report.get("findings") or []
    severity_counts = {level: 0 for level, _ in SEVERITIES}
    for finding in findings:
        level = str(finding.get("severity"))
        severity_counts[level] = severity_counts.get(level, 0) + 1
    return {
        "severity_counts": severity_counts,
        "findings_total": len(findings),
        "finding_keys": [finding_key(f) for f in findings] if keys else None,
        "output_reported": output_was_reported(report),
    }


def page_figures(
    report: Mapping[str, Any],
    counts: TraceCounts,
    *,
    running: bool,
    rule_count: int,
    digest: ReportDigest | None = None,
) -> PageFigures:
    """Every summary figure of the trace page, from its stored report and row counts;
    given the report's `digest`, `report` needs only its small keys (a page summary's)."""
    totals: Mapping[str, Any] = report.get("totals") or {}
    cost: Mapping[str, Any] = totals.get("cost_usd") or {}
    accounting: Mapping[str, Any] = report.get("accounting") or {}
    estimated = bool(accounting.get("estimated_calls"))
    digest = digest if digest is not None else report_digest(report)
    severity_counts = dict(digest["severity_counts"])
    output_reported = digest["output_reported"]
    what_if = report.get("what_if")
    return {
        "cards": _cards(
            counts, report, cost, accounting, severity_counts, estimated, output_reported
        ),
        "outcome": _outcome(report, running),
        "tokens": _tokens(totals, cost, accounting, estimated, output_reported),
        "findings": {
            "counts": severity_counts,
            "total": digest["findings_total"],
            "order": list(digest["finding_keys"] or []),
            "rule_count": rule_count,
        },
        "what_if": _what_if(what_if) if isinstance(what_if, Mapping) else None,
    }


def _cards(
    counts: TraceCounts,
    report: Mapping[str, Any],
    cost: Mapping[str, Any],
    accounting: Mapping[str, Any],
    severity_counts: Mapping[str, int],
    estimated: bool,
    output_reported: bool,
) -> list[Card]:
    agent, side = loop_counts(report.get("loops") or [])
    loops_note = _plural(agent, "loop") + (f" + {_plural(side, 'side call')}" if side else "")
    # The card shows the breakdown's total ("≈" when estimated), so the two agree: the
    # row's columns count reported usage only (0 when no call reported any).
    buckets: Mapping[str, int] = (report.get("totals") or {}).get("buckets") or {}
    total_input = sum(buckets.values()) or (
        counts["input_tokens"] + counts["cache_read_tokens"] + counts["cache_write_tokens"]
    )
    approx = "≈ " if estimated else ""
    read, written = counts["cache_read_tokens"], counts["cache_write_tokens"]
    unpriced = [str(name) for name in accounting.get("unpriced_models") or []]
    cost_note = (
        _part(f"no price for {', '.join(unpriced)}", "#unpriced-note")
        if unpriced
        else _part(f"uncached {formatting.money(cost.get('uncached'))}")
    )
    wall_note = [_part(_plural(counts["lines"], "line"))]
    if counts["line_errors"]:
        unreadable = f"{formatting.count(counts['line_errors'])} unreadable"
        wall_note += [_part(" · "), _part(unreadable, "#errors-title")]
    finding_badges: list[Badge] = [
        {"css": css, "text": _finding_badge(level, severity_counts[level]), "title": ""}
        for level, css in SEVERITIES
        if severity_counts.get(level)
    ]

    def card(key: str, text: str, **rest: Any) -> Card:
        return {
            "key": key,
            "label": CARD_LABELS[key],
            "text": text,
            "title": rest.get("title", ""),
            "badges": rest.get("badges", []),
            "badges_href": rest.get("badges_href"),
            "empty": rest.get("empty", ""),
            "note": rest.get("note", []),
            "note_title": rest.get("note_title", ""),
        }

    failed = counts["failed_calls"]
    return [
        card(
            "calls",
            formatting.count(counts["calls"]),
            badges=[
                {"css": "badge-error", "text": f"{formatting.count(failed)} failed", "title": ""}
            ]
            if failed
            else [],
            note=[_part(loops_note)],
        ),
        card("tool_runs", formatting.count(counts["tool_runs"])),
        card(
            "input",
            approx + formatting.tokens_compact(total_input),
            title=approx
            + formatting.count(total_input)
            + (" (tiktoken estimate where usage was not reported)" if estimated else ""),
            note=[
                _part(
                    f"cache {formatting.tokens_compact(read)} read · "
                    f"{formatting.tokens_compact(written)} written"
                )
            ],
            note_title=f"cache read {formatting.count(read)} · "
            f"cache write {formatting.count(written)}",
        ),
        card(
            "output",
            formatting.tokens_compact(counts["output_tokens"]) if output_reported else NOT_REPORTED,
            title=formatting.count(counts["output_tokens"])
            if output_reported
            else "No call reported its output tokens",
        ),
        card(
            "cost",
            formatting.money(cost.get("actual")),
            title=f"uncached: {formatting.money(cost.get('uncached'))} · with the stable prefix "
            f"cached: {formatting.money(cost.get('prefix_cached'))}",
            badges=[
                {
                    "css": "badge-info",
                    "text": "≈ est.",
                    "title": "Some calls reported no usage: their tokens are tiktoken estimates",
                }
            ]
            if estimated
            else [],
            note=[cost_note],
        ),
        card("findings", "", badges=finding_badges, badges_href="#findings-title", empty="none"),
        card("wall", formatting.duration(counts["wall_time_s"]), note=wall_note),
    ]


def _finding_badge(level: str, number: int) -> str:
    return f"{number} info" if level == "info" else _plural(number, level)


def _outcome(report: Mapping[str, Any], running: bool) -> OutcomeFigure:
    if running:
        return {
            "kind": "running",
            "running": True,
            "strong": RUNNING_STRONG,
            "rest": RUNNING_REST,
            "call": None,
        }
    outcome: Mapping[str, Any] = report.get("outcome") or {}
    call = outcome.get("call")
    return {
        "kind": str(outcome.get("kind") or "unknown"),
        "running": False,
        "strong": str(outcome.get("text") or ""),
        "rest": "",
        "call": call if isinstance(call, int) else None,
    }


NOT_REPORTED = "not reported"
"""What an output count no call reported reads as: never a count of 0."""


def output_was_reported(report: Mapping[str, Any]) -> bool:
    """Whether any output was reported (a total, or a call's count, 0 included); else the
    page says "not reported", never a count of 0."""
    if (report.get("totals") or {}).get("output_tokens"):
        return True
    return any(call.get("output_tokens") is not None for call in report.get("calls") or [])


def _tokens(
    totals: Mapping[str, Any],
    cost: Mapping[str, Any],
    accounting: Mapping[str, Any],
    estimated: bool,
    output_reported: bool = True,
) -> TokenFigures:
    buckets: Mapping[str, int] = totals.get("buckets") or {}
    input_total = sum(buckets.values()) or 0
    approx = "≈ " if estimated else ""
    rows: list[BucketFigure] = []
    for key, label in BUCKET_LABELS.items():
        tokens = buckets.get(key, 0)
        share = (100 * tokens / input_total) if input_total else 0
        rows.append(
            {
                "key": key,
                "label": label,
                "tokens": tokens,
                "tokens_text": approx + formatting.count(tokens),
                "tokens_title": formatting.count(tokens),
                "share_text": formatting.percent(share, scale=1, digits=0),
                "bar_width": formatting.percent(share, scale=1, digits=1),
            }
        )
    note = ""
    if estimated:
        calls = int(accounting.get("estimated_calls") or 0)
        note = (
            f"≈ marks estimates: {_plural(calls, 'call')} reported no usage and "
            f"{'was' if calls == 1 else 'were'} counted with tiktoken "
            f"{accounting.get('encoding') or ''}. "
        )
    prices = accounting.get("prices_source") or accounting.get("prices_taken") or ""
    return {
        "rows": rows,
        "input_total": approx + formatting.count(input_total),
        "output_total": formatting.count(totals.get("output_tokens", 0))
        if output_reported
        else NOT_REPORTED,
        "actual": formatting.money(cost.get("actual")),
        "uncached": formatting.money(cost.get("uncached")),
        "prefix_cached": formatting.money(cost.get("prefix_cached")),
        "note": f"{note}Prices: {prices}.",
        "unpriced": [
            {"model": str(model), "query": quote(str(model), safe="/")}
            for model in accounting.get("unpriced_models") or []
        ],
    }


def scenario_cells(scenario: Mapping[str, Any]) -> ScenarioCells:
    """A what-if scenario's figures as its row in the panel shows them."""
    ident = str(scenario.get("id") or "")
    saved = scenario.get("tokens_saved")
    if ident == "prompt-cache" or saved is None:
        tokens = formatting.MISSING
    else:
        approx = "≈ " if not scenario.get("exact") and saved else ""
        tokens = approx + formatting.count(saved)
    percent = scenario.get("percent_usd")
    seconds = scenario.get("seconds_saved")
    usd = scenario.get("usd_saved")
    # A fix that costs more says so in its dollars cell, with its share ("costs $9.92
    # more (+117.7%)"), never as a negative saving under "saved".
    costs_more = isinstance(usd, (int, float)) and usd < 0
    return {
        "id": ident,
        "status": str(scenario.get("status") or ""),
        "title": str(scenario.get("title") or ""),
        "tokens_saved": tokens,
        "usd_saved": formatting.MISSING
        if ident == "concurrent-tools"
        else formatting.saving(usd, percent),
        "percent_usd": formatting.MISSING
        if percent is None or costs_more
        else formatting.percent(percent, scale=1, digits=1),
        "seconds_saved": formatting.MISSING if seconds is None else formatting.duration(seconds),
    }


def _what_if(what_if: Mapping[str, Any]) -> WhatIfFigures:
    return {
        "scenarios": [scenario_cells(s) for s in what_if.get("scenarios") or []],
        "top_savings": [
            {
                "instruction": str(entry.get("instruction", "")),
                "saving": str(entry.get("saving", "")),
            }
            for entry in what_if.get("top_savings") or []
        ],
    }
