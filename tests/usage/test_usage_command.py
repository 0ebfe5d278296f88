"""`usage daily|weekly|monthly` against totals computed here from the stored calls."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction

from traces import models
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db

SESSIONS = (
    "claude_code_jsonl/codemie_session-196820da.jsonl",
    "claude_code_jsonl/codemie_session-3fe1b6bc.jsonl",
    "claude_code_jsonl/spotter/tool_heavy.jsonl",
)


@pytest.fixture
def stored(corpus):
    return [
        trace_upload(files=[(name, (corpus / name).read_bytes())], name=name).trace
        for name in SESSIONS
    ]


def _usage(capsys, *args):
    call_command("usage", *args, "--json")
    return json.loads(capsys.readouterr().out)


def _expected_by_day(tz):
    """Tokens and dollars per local day, from the stored Call rows and the reports' costs."""
    days: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for trace in models.Trace.objects.all():
        costs = {c["index"]: c["cost_usd"] for c in trace.report["calls"]}
        known = [c.started_at for c in trace.calls.all() if c.started_at is not None]
        for call in trace.calls.all():
            at = call.started_at if call.started_at is not None else min(known)
            day = dt.datetime.fromtimestamp(at // 3600 * 3600, tz).date().isoformat()
            row = days[day]
            row["input_tokens"] += call.input_tokens
            row["output_tokens"] += call.output_tokens
            row["cache_read_tokens"] += call.cache_read_tokens
            row["cache_write_tokens"] += call.cache_write_tokens
            row["cost_usd"] += costs[call.index] or 0.0
            row["priced"] += costs[call.index] is not None
            row["calls"] += 1
    return days


def test_daily_matches_the_stored_calls(stored, capsys):
    tz = dt.UTC
    summary = _usage(capsys, "daily", "--timezone", "UTC")
    expected = _expected_by_day(tz)
    assert [p["period"] for p in summary["periods"]] == sorted(expected)
    for entry in summary["periods"]:
        want = expected[entry["period"]]
        for name in ("calls", "input_tokens", "output_tokens", "cache_read_tokens",
                     "cache_write_tokens"):  # fmt: skip
            assert entry[name] == want[name], (entry["period"], name)
        if want["priced"]:
            assert entry["cost_usd"] == pytest.approx(want["cost_usd"], rel=1e-6)
        else:
            assert entry["cost_usd"] is None  # unknown, never $0
    totals = summary["totals"]
    assert totals["sessions"] == len(stored)
    assert totals["calls"] == sum(t.calls_count for t in stored)
    assert totals["cost_usd"] == pytest.approx(sum(t.cost_usd or 0 for t in stored), rel=1e-6)
    # the buckets and the kinds each split the same dollars
    assert sum(summary["by_kind"].values()) == pytest.approx(totals["cost_usd"], rel=1e-6)
    assert sum(summary["by_bucket"].values()) == pytest.approx(
        totals["cost_usd"] - summary["by_kind"]["output"], rel=1e-6
    )


def test_findings_and_savings_add_up_over_sessions(stored, capsys):
    summary = _usage(capsys, "monthly", "--timezone", "UTC")
    rules: dict[str, set] = defaultdict(set)
    for trace in stored:
        for finding in trace.report["findings"]:
            rules[finding["rule"]].add(trace.pk)
    assert {f["rule"]: f["sessions"] for f in summary["findings"]} == {
        rule: len(ids) for rule, ids in rules.items()
    }
    assert {f["rule"]: f["count"] for f in summary["findings"]} == {
        rule: sum(1 for t in stored for f in t.report["findings"] if f["rule"] == rule)
        for rule in rules
    }
    assert summary["savings"], "the what-if finds a saving in these sessions"
    dollars = [s["usd_saved"] or 0.0 for s in summary["savings"]]
    assert dollars == sorted(dollars, reverse=True)
    levers = {s["lever"]: s for s in summary["savings"]}
    per_trace: dict[str, float] = defaultdict(float)
    for trace in stored:
        for top in trace.report["what_if"]["top_savings"]:
            if top["scenario"] == "cap-results" and top["usd_saved"]:
                per_trace[top["instruction"]] += top["usd_saved"]
    assert per_trace, "a cap saving is among these sessions' top savings"
    for instruction, usd in per_trace.items():  # each trace's top cap saving is in the sum
        assert levers[instruction]["usd_saved"] >= usd - 1e-9
    traces_per_lever: dict[str, set] = defaultdict(set)
    for row in models.UsageSaving.objects.all():
        traces_per_lever[row.lever].add(row.trace_id)
    assert {s["lever"]: s["sessions"] for s in summary["savings"]} == {
        lever: len(ids) for lever, ids in traces_per_lever.items()
    }


def test_a_trace_has_one_saving_per_lever(stored):
    """The summary counts a lever's sessions as its rows: the table refuses a second one."""
    saving = models.UsageSaving.objects.first()
    assert saving is not None
    saving.pk = None
    with pytest.raises(IntegrityError), transaction.atomic():
        saving.save()


def test_filters_and_window(stored, capsys):
    everything = _usage(capsys, "daily", "--timezone", "UTC")
    first = everything["periods"][0]["period"]
    one_day = _usage(capsys, "daily", "--timezone", "UTC", "--since", first, "--until", first)
    assert [p["period"] for p in one_day["periods"]] == [first]
    assert one_day["periods"][0] == everything["periods"][0]
    model = everything["by_model"][0]["model"]
    only = _usage(capsys, "weekly", "--model", model, "--timezone", "UTC")
    assert only["totals"]["calls"] == everything["by_model"][0]["calls"]
    nobody = _usage(capsys, "daily", "--agent", "no-such-agent")
    assert nobody["periods"] == [] and nobody["totals"]["calls"] == 0


def test_text_output_and_errors(stored, capsys):
    call_command("usage", "daily", "--breakdown", "--timezone", "UTC")
    text = capsys.readouterr().out
    assert "Usage by day (UTC time)" in text and "total" in text
    assert "Input spend by what it carried:" in text
    with pytest.raises(CommandError, match="not a date"):
        call_command("usage", "daily", "--since", "yesterday")
    with pytest.raises(CommandError, match="unknown time zone"):
        call_command("usage", "daily", "--timezone", "Mars/Olympus")


def test_reanalysis_replaces_the_rows(stored, capsys):
    before = _usage(capsys, "daily", "--timezone", "UTC")
    call_command("reanalyze", str(stored[0].pk))
    capsys.readouterr()
    assert _usage(capsys, "daily", "--timezone", "UTC") == before


def test_reanalyze_missing_usage_backfills_the_rows(stored, capsys):
    before = _usage(capsys, "daily", "--timezone", "UTC")
    models.UsageSlot.objects.filter(trace=stored[1]).delete()
    models.UsageFinding.objects.filter(trace=stored[1]).delete()
    assert _usage(capsys, "daily", "--timezone", "UTC")["totals"]["sessions"] == 2
    call_command("reanalyze", "--missing-usage")
    assert "re-analysed 1 trace(s)" in capsys.readouterr().out
    assert _usage(capsys, "daily", "--timezone", "UTC") == before
