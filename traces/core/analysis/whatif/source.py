"""The part of a report the what-if reads, and nothing else: what a long trace keeps
beside its report (traces.storage.report_views) so that what-if.json with other
parameters is recomputed without decoding the whole report.

At 20,000 calls the report is 23 MB of JSON; decoding it, and the full collections of a
heap holding it, were most of a parameter change's cold time (bench/page.py: 650 ms of
CPU of which 120 ms built the basis). `basis_from_report` and `build_what_if` read from
this source exactly what they read from the report (tests/core/whatif/test_source.py
holds the two bases equal on the corpus), so either gives the same answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CALL_KEYS = (
    "index",
    "loop",
    "buckets",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "status",
    "http_status",
    "priced_as",
    "tokens_exact",
    "started_at",
    "duration_s",
    "extends_previous",
    "cost_usd",
    "model",
)
"""What `basis._call_facts` reads of a call."""

RUN_KEYS = (
    "id",
    "name",
    "call",
    "started_at",
    "ended_at",
    "result_call",
    "result_tokens",
    "result_tokens_exact",
    "requests_carrying",
)
"""What the basis reads of a tool run (its results and its timings)."""

SERIAL_RULE = "serial-independent-calls"
"""The one rule whose findings the basis reads (the batch-calls scenario)."""


def what_if_source(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report's what-if inputs, its loops, and the fields of its calls, tool runs,
    parallel batches and serial-call findings that the what-if reads."""
    accounting = report.get("accounting") or {}
    source: dict[str, Any] = {
        "calls": [_pick(call, CALL_KEYS) for call in report.get("calls") or []],
        "loops": [
            {"index": loop["index"], "calls": loop.get("calls") or []}
            for loop in report.get("loops") or []
        ],
        "tool_runs": [_pick(run, RUN_KEYS) for run in report.get("tool_runs") or []],
        "parallel_batches": [
            {"call": batch["call"], "tool_call_ids": batch.get("tool_call_ids") or []}
            for batch in report.get("parallel_batches") or []
        ],
        "findings": [
            _pick(finding, ("rule", "call", "tool_call_id"))
            for finding in report.get("findings") or []
            if finding.get("rule") == SERIAL_RULE
        ],
        "accounting": {"unpriced_models": accounting.get("unpriced_models") or []},
    }
    if "what_if" in report:  # its inputs: the scenarios are what is recomputed
        source["what_if"] = {"inputs": (report["what_if"] or {}).get("inputs") or {}}
    return source


def _pick(entry: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: entry[key] for key in keys if key in entry}
