"""What each MCP tool answers: Markdown for the agent to read, and the same facts as data.

These are the shell wiring the core, as views are: every read goes through the selectors
(`trace_search`, `trace_get`, `traces_comparison`, ...) and the core's own renderers
(`render_markdown`, `render_table`, `render_runs`), limited to what the principal may read.
A trace the principal may not read answers exactly as one that does not exist
(`NotFound`, one message for both), so no tool tells whether a hidden trace exists.

Trace text is untrusted: it reaches the Markdown only inside code spans or fenced blocks
(`traces.core.outputs.export_md`), and nothing here reads a call's headers or extras,
where credentials would be.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from django.http import Http404
from django.urls import reverse

from traces import models
from traces.access.rules import Access, Principal, local_mode
from traces.core.analysis.whatif import basis_from_report, build_what_if, parse_params
from traces.core.analysis.whatif.params import CAP_PREFIX, LIFETIMES
from traces.core.analysis.whatif.table import render_table
from traces.core.formatting import count, money
from traces.core.outputs.compare_text import render_runs
from traces.core.outputs.export_md import block, code, render_markdown
from traces.core.outputs.listquery import ListQuery
from traces.core.outputs.usage_text import usage_text
from traces.core.reading.credentials import mask_secrets
from traces.selectors.compare import traces_comparison
from traces.selectors.notes import postmortem_of
from traces.selectors.traces import trace_get, trace_search
from traces.selectors.usage import UsageQuery, usage_summary

FAILED_OUTCOMES = ("api_error", "max_tokens", "interrupted", "halted_on_tool_use")
"""What `list_traces(failed=true)` selects: the runs that did not end their turn normally."""
MAX_LIMIT = 100
SEVERITY_ORDER = MappingProxyType({"error": 0, "warning": 1, "info": 2})


class NotFound(Exception):
    """No such trace or call, or one the principal may not read (the same answer)."""


class BadArguments(Exception):
    """Arguments that cannot be read; the message says which and why."""


@dataclass(frozen=True)
class Answer:
    text: str
    """Markdown."""
    data: dict[str, Any]
    """The structured content: the same facts, for a program."""


def cell(value: Any) -> str:
    """Untrusted text in a Markdown table cell: a code span, its pipes escaped."""
    return code(value).replace("|", "\\|")


def readable_trace(who: Principal, trace_id: str) -> models.Trace:
    """The trace, with its report, if the principal may read it; else NotFound."""
    try:
        trace = trace_get(trace_id=uuid.UUID(str(trace_id).strip()))
    except (Http404, ValueError):
        raise NotFound(f"No such trace: {trace_id!s:.100}") from None
    if not who.allows_trace(Access.READ, trace.pk, trace.project_id):
        raise NotFound(f"No such trace: {trace_id!s:.100}")
    return trace


# -- list_traces --------------------------------------------------------------------------------
def list_traces(who: Principal, filters: dict[str, Any], failed: bool, limit: int) -> Answer:
    """The trace list's search and filters (the query-string names of `ListQuery`)."""
    params = {key: str(value) for key, value in filters.items() if value not in (None, "")}
    if "errors" in params:
        params["errors"] = "1" if filters["errors"] else ""
    query = ListQuery.parse(params)
    if query.problems:
        raise BadArguments("; ".join(query.problems))
    if not 1 <= limit <= MAX_LIMIT:
        raise BadArguments(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
    traces = who.traces(trace_search(query=query))
    if failed:
        traces = traces.filter(outcome_kind__in=FAILED_OUTCOMES).exclude(
            state=models.Trace.State.LIVE
        )
    total = traces.count()
    start = (query.page - 1) * limit
    rows = [_row(trace) for trace in traces[start : start + limit]]
    lines = [f"{total} trace(s) match; showing {len(rows)} from {start + 1}.", ""]
    if rows:
        lines += [
            "| id | name | added | outcome | calls | cost | findings |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {row['id']} | {cell(row['name'])} | {row['created_at'][:19]} "
            f"| {row['outcome']} | {row['calls']} | {money(row['cost_usd'])} "
            f"| {row['findings']} |"
            for row in rows
        ]
        lines += ["", "Next: `get_postmortem(trace_id)` for what went wrong and what to fix."]
    return Answer("\n".join(lines) + "\n", {"total": total, "page": query.page, "traces": rows})


def _row(trace: models.Trace) -> dict[str, Any]:
    return {
        "id": str(trace.pk),
        "name": trace.name,
        "created_at": trace.created_at.isoformat(),
        "format": trace.format,
        "state": trace.state,
        "outcome": "live" if trace.state == models.Trace.State.LIVE else trace.outcome_kind,
        "calls": trace.calls_count,
        "input_tokens": trace.input_tokens,
        "output_tokens": trace.output_tokens,
        "cost_usd": trace.cost_usd,
        "findings": trace.flags_count,
        "error_results": trace.error_results,
        "model": trace.model,
        "agent": trace.agent,
    }


# -- get_postmortem, lint, get_call -------------------------------------------------------------
def get_postmortem(who: Principal, trace_id: str, base: str = "") -> Answer:
    """The Markdown export of the post-mortem page, linking the trace's page when the
    transport knows the site's address (`base`)."""
    trace = readable_trace(who, trace_id)
    pm = postmortem_of(trace)  # with its notes and root causes
    url = f"{base}{reverse('traces:detail', args=[trace.pk])}" if base else ""
    return Answer(
        render_markdown(pm, url),
        {
            "id": str(trace.pk),
            "name": trace.name,
            "outcome": pm.outcome,
            "first_error": pm.first_error,
            "top_fixes": pm.savings,
            "cost_usd": pm.cost,
            "findings": {rule: len(found) for rule, found in pm.findings_by_rule},
        },
    )


def lint(who: Principal, trace_id: str, severity: str = "") -> Answer:
    if severity and severity not in SEVERITY_ORDER:
        raise BadArguments(f"severity must be error, warning or info, not {severity!r}")
    trace = readable_trace(who, trace_id)
    findings = list(trace.report.get("findings") or [])
    if severity:
        findings = [
            f for f in findings if SEVERITY_ORDER[f["severity"]] <= SEVERITY_ORDER[severity]
        ]
    findings = [mask_secrets(finding) for finding in findings]
    lines = [f"# Findings of {code(trace.name)}", "", f"{len(findings)} finding(s).", ""]
    for finding in findings:
        where = f" (call {finding['call']})" if finding.get("call") is not None else ""
        lines.append(
            f"- **{finding['severity']}** {code(finding['rule'])}{where}: "
            f"{code(finding.get('message', ''))}"
        )
    return Answer("\n".join(lines) + "\n", {"id": str(trace.pk), "findings": findings})


CALL_FIELDS = (
    "index",
    "loop",
    "model",
    "status",
    "stop_reason",
    "error",
    "http_status",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "buckets",
    "tokens_exact",
    "started_at",
    "duration_s",
    "cost_usd",
    "priced_as",
    "tool_call_ids",
)
"""What `get_call` shows of a call's report entry: counts and states, no request text."""
RUN_FIELDS = ("id", "name", "status", "is_error", "duration_s", "result_tokens", "resend_tokens")


def get_call(who: Principal, trace_id: str, index: int) -> Answer:
    trace = readable_trace(who, trace_id)
    calls = {call["index"]: call for call in trace.report.get("calls") or []}
    if index not in calls:
        raise NotFound(f"No such call: {index} (this trace has {len(calls)} calls)")
    call = mask_secrets({key: calls[index].get(key) for key in CALL_FIELDS})
    runs = [
        mask_secrets({key: run.get(key) for key in RUN_FIELDS})
        for run in trace.report.get("tool_runs") or []
        if run.get("call") == index
    ]
    findings = [
        mask_secrets(f) for f in trace.report.get("findings") or [] if f.get("call") == index
    ]
    buckets = call.get("buckets") or {}
    estimate = "" if call.get("tokens_exact", True) else "≈"
    lines = [
        f"# Call {index} of {code(trace.name)}",
        "",
        f"- model: {code(call.get('model') or '?')}",
        f"- status: {code(call.get('status'))}, stop reason {code(call.get('stop_reason'))}"
        + (f", error {code(call['error'])}" if call.get("error") else ""),
        f"- input: {estimate}{count(sum(buckets.values()))} tokens ("
        + ", ".join(f"{name.replace('_', ' ')} {count(value)}" for name, value in buckets.items())
        + f"); output {count(call.get('output_tokens'))}",
        f"- cache: read {count(call.get('cache_read_tokens'))}, "
        f"written {count(call.get('cache_write_tokens'))}",
        f"- cost: {money(call.get('cost_usd'))}; duration {call.get('duration_s')} s",
    ]
    if runs:
        lines += ["", "## Tool calls it asked for", ""]
        lines += [
            f"- {code(run['name'])} {code(run['id'])}: {run['status']}"
            + (" (error result)" if run.get("is_error") else "")
            + f", result {count(run.get('result_tokens'))} tokens"
            for run in runs
        ]
    if findings:
        lines += ["", "## Findings on this call", ""]
        lines += [
            f"- **{f['severity']}** {code(f['rule'])}: {code(f.get('message', ''))}"
            for f in findings
        ]
    data = {"trace": str(trace.pk), "call": call, "tool_runs": runs, "findings": findings}
    return Answer("\n".join(lines) + "\n", data)


# -- what_if, compare, usage --------------------------------------------------------------------
def what_if(
    who: Principal,
    trace_id: str,
    *,
    caps: dict[str, int] | None,
    clear_after: int | None,
    cache_lifetime: str | None,
    drop_unused: bool | None,
    batch: bool | None,
) -> Answer:
    """The trace page's what-if panel recomputed with these parameters (the same parser)."""
    if cache_lifetime is not None and cache_lifetime not in LIFETIMES:
        raise BadArguments(f"cache_lifetime must be one of {', '.join(LIFETIMES)}")
    if clear_after is not None and clear_after < 1:
        raise BadArguments("clear_after must be 1 or more")
    if any(tokens < 0 for tokens in (caps or {}).values()):
        raise BadArguments("a cap is a number of tokens, 0 or more")
    trace = readable_trace(who, trace_id)
    if "what_if" not in trace.report:
        raise BadArguments("this trace was analysed before what-if existed; reanalyse it")
    values: dict[str, str] = {f"{CAP_PREFIX}{tool}": str(n) for tool, n in (caps or {}).items()}
    if clear_after is not None:
        values["clear_after"] = str(clear_after)
    if cache_lifetime is not None:
        values["cache_lifetime"] = cache_lifetime
    if drop_unused is not None:
        values["drop_unused"] = "1" if drop_unused else "0"
    if batch is not None:
        values["batch"] = "1" if batch else "0"
    basis = basis_from_report(trace.report)
    result = build_what_if(trace.report, parse_params(basis, values or None), basis=basis)
    text = f"# What if: {code(trace.name)}\n\n{block(render_table(trace.name, result))}\n"
    return Answer(text, {"id": str(trace.pk), "what_if": result})


def compare(who: Principal, a: str, b: str) -> Answer:
    trace_a, trace_b = readable_trace(who, a), readable_trace(who, b)
    result = traces_comparison(trace_a, trace_b)
    text = (
        f"# Compare {code(trace_a.name)} (A) with {code(trace_b.name)} (B)\n\n"
        f"{block(render_runs(result))}\n"
    )
    return Answer(text, result)


PERIOD_NAMES = MappingProxyType({"day": "daily", "week": "weekly", "month": "monthly"})
"""The tool's period names, and the usage page's and command's."""


def usage(who: Principal, period: str, since: str | None, until: str | None) -> Answer:
    """What `/usage/` and `loop-inspector usage` say (one selector, days in UTC): spend and
    tokens per period, by model, agent and project, by bucket, finding and fix."""
    if period not in PERIOD_NAMES:
        raise BadArguments(f"period must be one of {', '.join(PERIOD_NAMES)}, not {period!r}")
    days = {}
    for name, value in (("since", since), ("until", until)):
        try:
            days[name] = dt.date.fromisoformat(value) if value else None
        except ValueError:
            raise BadArguments(f"{name}: {value!r} is not a date (YYYY-MM-DD)") from None
    query = UsageQuery(period=PERIOD_NAMES[period], tz=dt.UTC, breakdown=True, **days)
    projects = None if local_mode() else who.projects().values_list("pk", flat=True)
    summary = usage_summary(query=query, project_ids=projects)
    text = f"# Spend and tokens per {period} (UTC)\n\n{block(usage_text(summary))}\n"
    return Answer(text, summary)
