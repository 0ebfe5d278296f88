"""The report's declared types (core/report_types.py) fit the wire: every golden report,
and a fresh one, has exactly the keys the types declare, at every level."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict

import orjson
import pytest

from tests.golden import GOLDEN, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.report_types import Report, StoredReport

REPORTS = sorted(GOLDEN.rglob("*.report.json"))


def misfits(value: Any, hint: Any, where: str) -> list[str]:
    """Where `value` has a key its TypedDict does not declare, or lacks a required one."""
    if is_typeddict(hint):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__}, not an object"]
        required, optional = set(hint.__required_keys__), set(hint.__optional_keys__)
        found = [f"{where}: missing {key!r}" for key in sorted(required - set(value))]
        found += [
            f"{where}: undeclared {key!r}" for key in sorted(set(value) - required - optional)
        ]
        hints = get_type_hints(hint)
        for key in sorted(set(value) & set(hints)):
            found += misfits(value[key], hints[key], f"{where}.{key}")
        return found
    origin = get_origin(hint)
    if origin is list and isinstance(value, list):
        (item,) = get_args(hint)
        return [m for i, entry in enumerate(value) for m in misfits(entry, item, f"{where}[{i}]")]
    if origin in (Union, types.UnionType) and value is not None:
        inner = [arg for arg in get_args(hint) if arg is not type(None)]
        return misfits(value, inner[0], where) if len(inner) == 1 else []
    return []


def test_the_checker_notices_an_undeclared_or_missing_key():
    report = orjson.loads(REPORTS[0].read_bytes())
    report["calls"][0]["surprise"] = 1
    del report["totals"]["buckets"]["other"]
    assert misfits(report, Report, "report") == [
        "report.calls[0]: undeclared 'surprise'",
        "report.totals.buckets: missing 'other'",
    ]


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: str(Path(p).relative_to(GOLDEN)))
def test_every_golden_report_has_the_declared_shape(path):
    assert misfits(orjson.loads(path.read_bytes()), Report, "report") == []


def test_a_fresh_report_with_optional_keys_has_the_declared_shape():
    """MCP transport and other traffic, hook events and a session result: the optional keys."""
    for name in ("mcp/tools_over_mcp.yaml", "claude-agent-sdk/stream.jsonl"):
        trace = analyze_bytes(golden_input(name), filename=name)
        assert misfits(build_report(trace), Report, name) == []


def test_a_stored_report_may_be_empty():
    """A live trace holds `{}` until its first report: every stored key is optional."""
    assert misfits({}, StoredReport, "stored") == []
    assert StoredReport.__optional_keys__ == Report.__required_keys__ | Report.__optional_keys__
