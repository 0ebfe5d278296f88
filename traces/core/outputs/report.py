"""The JSON report (`loop-inspector/report/v1`): the stable, documented view of a trace.

Later versions add keys; none are renamed. See docs/report-schema.md.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from ..analysis.accounting import Accounting, account
from ..analysis.failed_generation import attempted_tool_calls
from ..analysis.pricing import PriceTable, library_table
from ..analysis.rules.base import Finding
from ..analysis.rules.registry import run_rules
from ..analysis.whatif import Basis, basis_from_report, build_what_if, what_if_inputs
from ..gcpause import without_cycle_collection
from ..model import Call, HttpTraffic, Loop, Score, ToolRun, Trace, Usage
from ..report_types import (
    AccountingEntry,
    CallEntry,
    CallFacts,
    CompactionEntry,
    LinesEntry,
    LoopEntry,
    OtherTrafficEntry,
    ParallelBatchEntry,
    Report,
    ToolRunEntry,
    ToolRunFacts,
    TotalsEntry,
)
from .summary import outcome_of

SCHEMA = "loop-inspector/report/v1"
RESULT_PREVIEW_CHARS = 300
"""How much of a tool result a report's tool-run entry previews (live events send the same)."""
OPTIONAL_CALL_KEYS = ("hook_events", "session_result", "call_outcome")
"""Recorded facts about a call that only some formats have (Claude Agent SDK hook round
trips and the session's final result; how a proxied call that did not complete ended);
present in the report only when recorded."""


@without_cycle_collection
def _score(score: Score) -> dict[str, str]:
    return {
        "sample": score.sample,
        "scorer": score.scorer,
        "value": score.value,
        "answer": score.answer,
        "explanation": score.explanation,
    }


def build_report(
    trace: Trace,
    *,
    prices: PriceTable | None = None,
    accounting: Accounting | None = None,
    findings: list[Finding] | None = None,
) -> Report:
    """The whole report: rebuilt loop, token and cost accounting, and lint findings."""
    return report_and_basis(trace, prices=prices, accounting=accounting, findings=findings)[0]


def report_and_basis(
    trace: Trace,
    *,
    prices: PriceTable | None = None,
    accounting: Accounting | None = None,
    findings: list[Finding] | None = None,
) -> tuple[Report, Basis]:
    """`build_report`'s report and the what-if basis it was priced from, for a caller
    that needs the basis again (a long trace's stored views and parts): building it
    from the report a second time cost a 20,000-call ingest 170 ms."""
    accounting = accounting or account(trace, prices)
    if findings is None:
        findings = run_rules(trace, accounting)
    calls = [
        cast(CallEntry, call_facts(call) | _call_account(accounting, call.index - 1))
        for call in trace.calls
    ]
    runs = [_run(run, accounting, position) for position, run in enumerate(trace.tool_runs)]
    reported = [call.usage for call in trace.calls if call.usage is not None]
    report: dict[str, Any] = {
        "schema": SCHEMA,
        "format": trace.format,
        "detection": trace.detection_reason,
        "outcome": outcome_of(trace).as_dict(),
        "lines": _lines(trace),
        "loops": [_loop(loop) for loop in trace.loops],
        "calls": calls,
        "tool_runs": runs,
        "parallel_batches": [_batch(batch.call, batch.tool_call_ids) for batch in trace.batches],
        "totals": _totals(trace, reported, accounting),
        "accounting": _accounting(accounting),
        "findings": [finding.as_dict() for finding in findings],
        **({"notes": list(trace.notes)} if trace.notes else {}),
        **({"mapping": dict(trace.mapping)} if trace.mapping else {}),
        **({"scores": [_score(score) for score in trace.scores]} if trace.scores else {}),
    }
    if trace.other_traffic:
        report["other_traffic"] = [_traffic(item) for item in trace.other_traffic]
    # What each fix would have saved, computed from the report itself (so the web can
    # recompute it with other parameters) plus the inputs only the trace holds.
    table = accounting.table or prices or library_table()
    priced = {entry.model_priced_as for entry in accounting.calls}
    report["what_if"] = {"inputs": what_if_inputs(trace, priced, table)}
    basis = basis_from_report(report)  # the scenarios do not change what it reads
    report["what_if"] = build_what_if(report, basis=basis)
    # Built as a plain dict so the optional keys keep their place on the wire; every
    # value above is typed by its own helper.
    return cast(Report, report), basis


def _lines(trace: Trace) -> LinesEntry:
    return {
        "total": trace.lines_total,
        "ingested": trace.records_ingested,
        "errors": [{"line": e.line, "message": e.message} for e in trace.line_errors],
    }


def _loop(loop: Loop) -> LoopEntry:
    return {
        "index": loop.index,
        "calls": list(loop.calls),
        "model": loop.model,
        "label": loop.label,
        "parent_tool_id": loop.parent_tool_id,
    }


def _batch(call: int, tool_call_ids: tuple[str, ...]) -> ParallelBatchEntry:
    return {"call": call, "tool_call_ids": list(tool_call_ids)}


def _totals(trace: Trace, reported: list[Usage], accounting: Accounting) -> TotalsEntry:
    """Counts, token sums over the calls that reported usage, buckets and cost."""
    return {
        "calls": len(trace.calls),
        "failed_calls": sum(1 for c in trace.calls if c.status == "error"),
        "loops": len(trace.loops),
        "tool_runs": len(trace.tool_runs),
        "input_tokens": sum(u.input_tokens for u in reported),
        "output_tokens": sum(u.output_tokens for u in reported),
        "cache_read_tokens": sum(u.cache_read_tokens for u in reported),
        "cache_write_tokens": sum(u.cache_write_tokens for u in reported),
        "buckets": accounting.buckets.as_dict(),
        "cost_usd": accounting.cost_totals(),
    }


def _accounting(accounting: Accounting) -> AccountingEntry:
    return {
        "encoding": accounting.encoding,
        "estimated_calls": accounting.estimated_calls,
        "prices_taken": accounting.prices_taken,
        "prices_source": accounting.prices_source,
        "unpriced_models": list(accounting.unpriced_models),
    }


def _run(run: ToolRun, accounting: Accounting, position: int) -> ToolRunEntry:
    """One tool run: its facts, with the accounting of its result after the pairing."""
    facts = tool_run_facts(run)
    head = {key: value for key, value in facts.items() if key not in _AFTER_ACCOUNT}
    tail = {key: facts[key] for key in _AFTER_ACCOUNT if key in facts}
    return cast(ToolRunEntry, head | _result_account(accounting, position) | tail)


_AFTER_ACCOUNT: tuple[Literal["transport", "error_inferred"], ...] = ("transport", "error_inferred")
"""Facts of a tool run that the report lists after its accounting (its keys keep their
place on the wire)."""


def tool_run_facts(run: ToolRun) -> ToolRunFacts:
    """A tool run as recorded (the report's entry before the accounting; what a live
    event sends); keys that say nothing for this run (pairing by id, no transport, no
    inferred error) are left out."""
    entry = {
        "id": run.id,
        "name": run.name,
        "call": run.call,
        "result_call": run.result_call,
        "status": run.status,
        "is_error": run.is_error,
        "batch_size": run.batch_size,
        "loop": run.loop,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "duration_s": run.duration_s,
        "result_preview": run.result_text[:RESULT_PREVIEW_CHARS],
        **_run_provenance(run),
        **({"error_inferred": run.error_inferred} if run.error_inferred else {}),
    }
    return cast(ToolRunFacts, entry)


def _run_provenance(run: ToolRun) -> dict[str, Any]:
    """Keys present only when they say something: a pairing other than by id, and where
    the tool really ran (an MCP `tools/call`)."""
    extra: dict[str, Any] = {}
    if run.pairing != "id":
        extra["pairing"] = run.pairing
    if run.transport is not None:
        extra["transport"] = dict(run.transport)
    return extra


def _traffic(item: HttpTraffic) -> OtherTrafficEntry:
    return {
        "line": item.line,
        "kind": item.kind,
        "method": item.method,
        "url": item.url,
        "status": item.status,
        "summary": item.summary,
        "rpc_method": item.rpc_method,
        "rpc_id": item.rpc_id,
        "session": item.session,
        "tool_name": item.tool_name,
        "is_error": item.is_error,
    }


def _call_account(accounting: Accounting, position: int) -> dict[str, Any]:
    entry = accounting.calls[position]
    return {
        "buckets": entry.buckets.as_dict(),
        "tokens_exact": entry.tokens_exact,
        "estimate_residual": entry.residual,
        "cost_usd": _round(entry.cost_usd),
        "cost_uncached_usd": _round(entry.cost_uncached_usd),
        "cost_prefix_cached_usd": _round(entry.cost_prefix_cached_usd),
        "priced_as": entry.model_priced_as,
    }


def _result_account(accounting: Accounting, position: int) -> dict[str, Any]:
    entry = accounting.results.get(position)
    if entry is None:
        return {"result_tokens": None, "requests_carrying": 0, "resend_tokens": 0}
    return {
        "result_tokens": entry.result_tokens,
        "requests_carrying": entry.requests_carrying,
        "resend_tokens": entry.resend_tokens,
        "result_tokens_exact": entry.tokens_exact,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def call_facts(call: Call) -> CallFacts:
    """A call as recorded (the report's entry before the accounting; what a live event
    sends); the optional keys only when the call has them."""
    usage = call.usage
    facts = {
        "index": call.index,
        "loop": call.loop,
        "line": call.line,
        "model": call.model,
        "stop_reason": call.stop_reason,
        "status": call.status,
        "error": call.error,
        "http_status": call.http_status,
        "input_tokens": usage.input_tokens if usage else None,
        "output_tokens": usage.output_tokens if usage else None,
        "cache_read_tokens": usage.cache_read_tokens if usage else None,
        "cache_write_tokens": usage.cache_write_tokens if usage else None,
        "tool_call_ids": list(call.tool_call_ids),
        "started_at": call.started_at,
        "duration_s": call.duration_s,
        "messages": call.message_count,
        "appended": len(call.appended),
        "extends_previous": call.extends_previous,
        "history_rewritten": call.history_rewritten,
        **{key: call.extra[key] for key in OPTIONAL_CALL_KEYS if call.extra.get(key)},
        **({"compaction": compaction} if (compaction := compaction_of(call)) else {}),
        **({"attempted_tool_calls": tried} if (tried := _attempted(call)) is not None else {}),
    }
    return cast(CallFacts, facts)


def _attempted(call: Call) -> list[dict[str, Any]] | None:
    """What a failed generation tried to call (from the error body), on failed calls."""
    return attempted_tool_calls(call.response_raw) if call.status == "error" else None


def compaction_of(call: Call) -> CompactionEntry | None:
    """How the call's history was compacted before it was sent, when it was.

    Adapters say so in `extra["compaction"]`: Codex `compacted` lines and
    `context_compacted` events, Claude Code `compact_boundary` lines (with their
    `compactMetadata`), server-side compaction blocks (found by the builder).
    """
    raw = call.extra.get("compaction") if call.extra else None
    if not isinstance(raw, dict):
        return None
    source = raw.get("source") or "Claude Code compact boundary"
    line = raw.get("line", raw.get("boundary_line"))
    pre_tokens = raw.get("preTokens", raw.get("pre_tokens"))
    return {
        "source": str(source),
        "line": line if isinstance(line, int) else None,
        "trigger": raw.get("trigger") if isinstance(raw.get("trigger"), str) else None,
        "pre_tokens": pre_tokens if isinstance(pre_tokens, int) else None,
    }
