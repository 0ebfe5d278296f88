"""A call row's marks (core/outputs/call_row.py): the report's accounting once it covers
the call, the call's own usage before; an estimate only for a call without usage."""

from __future__ import annotations

from dataclasses import replace

from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.pricing import library_table
from traces.core.model import Call, Usage
from traces.core.outputs.call_row import call_row_marks, usage_cost
from traces.core.report_types import FindingEntry

from .builders import log, pair, response, user


def call(index: int, *, model: str, usage: Usage | None) -> Call:
    """A real call (read from a one-call log), with the given model and usage."""
    [read] = analyze_bytes(log(pair([user("hi")], response([], "end_turn")))).calls
    return replace(read, index=index, model=model, usage=usage)


ACCOUNT = {
    "cost_usd": 0.0123,
    "buckets": {"prefix": 100, "tool_results": 20, "replayed_output": 3, "other": 1},
}
FINDING: FindingEntry = {
    "rule": "api-error",
    "severity": "error",
    "call": 2,
    "tool_call_id": None,
    "loop": 1,
    "message": "<b>failed</b>",
}


def test_once_the_report_covers_a_call_its_marks_are_the_reports():
    marks = call_row_marks(
        usage_reported=False,
        tool_names=("search", "?"),
        account=ACCOUNT,
        findings=[FINDING],
        cost_usd=9.9,  # the usage's cost gives way to the report's
    )
    assert marks == {
        "tool_names": ["search", "?"],
        "cost_usd": 0.0123,
        "estimated_input": 124,
        "findings": [FINDING],
    }
    assert (
        call_row_marks(usage_reported=True, tool_names=(), account=ACCOUNT)["estimated_input"]
        is None
    )  # its tokens are the reported ones


def test_before_the_report_the_cost_is_the_usages_and_nothing_is_estimated():
    marks = call_row_marks(usage_reported=False, tool_names=[], account=None, cost_usd=0.5)
    assert marks == {"tool_names": [], "cost_usd": 0.5, "estimated_input": None, "findings": []}


def test_a_report_written_before_a_key_existed_reads_as_unknown():
    marks = call_row_marks(usage_reported=False, tool_names=[], account={}, cost_usd=0.5)
    assert (marks["cost_usd"], marks["estimated_input"]) == (None, None)


def test_the_usage_cost_is_the_reports_rounding_and_unknown_without_usage_or_price():
    prices = library_table()
    usage = Usage(
        input_tokens=1_000, output_tokens=2_000, cache_read_tokens=30_000, cache_write_tokens=7
    )
    priced = call(1, model="claude-sonnet-4-5", usage=usage)
    cost = usage_cost(priced, prices)
    assert cost is not None and cost > 0 and cost == round(cost, 6)
    assert usage_cost(call(2, model="claude-sonnet-4-5", usage=None), prices) is None
    assert usage_cost(call(3, model="<no such model>", usage=usage), prices) is None
