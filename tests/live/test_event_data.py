"""Live events are the report's own data: real sessions from the corpus (a Claude Code
session and its subagent, two loops interleaved by time as one log; a Codex session)
tailed a few lines at a time, then every event checked against the report the closed
trace stores. A call event holds the call's entry in that report, key for key and value
for value, but the accounting (which follows in the report) and with the row's marks
and place instead; a tool run event the run's entry but its resend accounting; a
finding event the finding's entry."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.conftest import CORPUS
from tests.core.test_report_types import misfits
from tests.live.test_held_messages import interleaved_lines
from traces import live, models
from traces.core.report_types import (
    CallEntry,
    CallFacts,
    CallRowMarks,
    FindingEntry,
    LiveCallAccountEntry,
    LiveCallEntry,
    LiveFindingEntry,
    LiveToolRunEntry,
    ToolRunEntry,
    ToolRunFacts,
)
from traces.pages.presenters import trace_context
from traces.selectors.figures import trace_figures

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.corpus]

CODEX = (
    CORPUS
    / "codex_rollout_jsonl"
    / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
)


def keys(shape: type) -> set[str]:
    return set(shape.__required_keys__ | shape.__optional_keys__)  # type: ignore[attr-defined]


CALL_FACTS, RUN_FACTS = keys(CallFacts), keys(ToolRunFacts)
CALL_ACCOUNT = keys(CallEntry) - CALL_FACTS
RUN_ACCOUNT = keys(ToolRunEntry) - RUN_FACTS
CALL_LIVE = keys(LiveCallEntry) - CALL_FACTS
RUN_LIVE = keys(LiveToolRunEntry) - RUN_FACTS


def claude_code_lines() -> tuple[list[bytes], str | None]:
    return interleaved_lines(), None


def codex_lines() -> tuple[list[bytes], str | None]:
    if not CODEX.is_file():
        pytest.skip(f"the public trace corpus is not present at {CORPUS}")
    return CODEX.read_bytes().splitlines(), "codex-rollout"


def tail(lines: list[bytes], format_name: str | None, batch: int) -> models.Trace:
    trace = live.create_live_trace(name="tailed", format_name=format_name)
    for start in range(0, len(lines), batch):
        live.append_lines(trace_id=trace.pk, offset=start, lines=lines[start : start + batch])
    assert live.wait_for_reports(30)
    live.close_live_trace(trace_id=trace.pk)
    return models.Trace.objects.get(pk=trace.pk)


def sent(trace: models.Trace, kind: str) -> list[dict]:
    events = trace.live_events.filter(type=kind).order_by("seq")
    return [event.payload for event in events]


@pytest.mark.parametrize("session", [claude_code_lines, codex_lines], ids=["claude", "codex"])
def test_live_events_carry_the_reports_own_entries(client: Client, session):
    lines, format_name = session()
    trace = tail(lines, format_name, batch=7)
    report = client.get(f"/api/traces/{trace.pk}").json()
    assert report == trace.report and len(report["loops"]) >= 1

    # Every event of a kind the report knows has the declared shape, at every level.
    shapes = {
        "call": LiveCallEntry,
        "call_account": LiveCallAccountEntry,
        "tool_run": LiveToolRunEntry,
        "finding": LiveFindingEntry,
    }
    events = list(trace.live_events.filter(type__in=shapes).order_by("seq"))
    assert {event.type for event in events} == set(shapes)
    for event in events:
        assert misfits(event.payload, shapes[event.type], f"{event.type} {event.seq}") == []

    calls = sent(trace, "call")
    assert [call["index"] for call in calls] == [c["index"] for c in report["calls"]]
    assert len(calls) == trace.calls_count > 1
    names_in_report: dict[int, list[str]] = {}
    for run in report["tool_runs"]:
        if run["call"] is not None:
            names_in_report.setdefault(run["call"], []).append(run["name"] or "?")
    for call, entry in zip(calls, report["calls"], strict=True):
        # Same keys, same values: the call's facts, then the report's accounting or the
        # event's marks and place.
        assert set(call) - CALL_LIVE == set(entry) - CALL_ACCOUNT
        assert set(call) - CALL_FACTS == CALL_LIVE and set(entry) - CALL_FACTS == CALL_ACCOUNT
        assert {k: call[k] for k in CALL_FACTS if k in call} == {
            k: entry[k] for k in CALL_FACTS if k in entry
        }
        # The marks, as far as they are known before the report: its tools, its cost
        # from its own usage (the report's, for a call that reported it).
        assert call["tool_names"] == names_in_report.get(call["index"], [])
        assert call["findings"] == [] and call["estimated_input"] is None
        if call["input_tokens"] is not None and call["status"] == "ok":
            assert call["cost_usd"] == entry["cost_usd"]
        assert call["url"] == f"/traces/{trace.pk}/calls/{call['index']}/"
    stored = {row.index: row for row in trace.calls.all()}
    for call in calls:  # what the page's row shows from the stored call, the event has
        row = stored[call["index"]]
        assert (row.base_call, row.message_count - row.prefix_len) == (
            call["base_call"],
            call["appended"],  # the row's "+n new since call k"
        )

    # Once a report covers a call, its accounting follows (once per call): the cost and
    # estimate the page's first paint shows, from the same report entry.
    accounts = sent(trace, "call_account")
    assert [a["index"] for a in accounts] == [c["index"] for c in calls]
    for account, entry in zip(accounts, report["calls"], strict=True):
        assert set(account) == keys(LiveCallAccountEntry)
        estimate = sum(entry["buckets"].values()) if entry["input_tokens"] is None else None
        assert (account["cost_usd"], account["estimated_input"]) == (entry["cost_usd"], estimate)

    # A tool run's last event is its entry in the final report (but the accounting).
    last_run: dict[int, dict] = {}
    for run in sent(trace, "tool_run"):
        last_run[run["position"]] = run
    assert sorted(last_run) == list(range(1, len(report["tool_runs"]) + 1))
    for position, entry in enumerate(report["tool_runs"], start=1):
        run = last_run[position]
        assert set(run) - RUN_LIVE == set(entry) - RUN_ACCOUNT
        assert {k: run[k] for k in RUN_FACTS if k in run} == {
            k: entry[k] for k in RUN_FACTS if k in entry
        }

    # Findings added, reworded and resolved, replayed as a viewer does (a finding replaces
    # the one with its rule, call, tool call and loop), are the final report's findings.
    def key(finding: dict) -> tuple:
        return (finding["rule"], finding["call"], finding["tool_call_id"], finding["loop"])

    shown: dict[tuple, dict] = {}
    for finding in sent(trace, "finding"):
        assert set(finding) - keys(LiveFindingEntry) == set()
        assert set(finding) - {"resolved"} == keys(FindingEntry)
        if finding.get("resolved"):
            shown.pop(key(finding))
        else:
            shown[key(finding)] = finding
    assert sorted(shown.values(), key=key) == sorted(report["findings"], key=key)

    # The state events carry the page's figures: while live, the row's counts of the
    # moment and "Running"; at close, what the page's first paint shows, value for value.
    states = sent(trace, "state")
    assert [s["state"] for s in states] == ["live"] * (len(states) - 1) + ["closed"]
    for state in states:
        cards = {card["key"]: card for card in state["figures"]["cards"]}
        assert cards["calls"]["text"] == f"{state['calls']:,}"
        assert cards["tool_runs"]["text"] == f"{state['tool_runs']:,}"
        assert state["figures"]["outcome"]["running"] is (state["state"] == "live")
    final = states[-1]["figures"]
    assert final == trace_figures(trace)
    assert final["outcome"]["strong"] == report["outcome"]["text"]
    assert final["findings"]["total"] == len(report["findings"])
    assert client.get(f"/traces/{trace.pk}/").context["page_figures"] == final


def test_the_first_paint_and_the_live_event_mark_a_row_alike(client: Client):
    """The trace page's rows take their marks from the same function as the events: once
    the report covers a call, its row has the event's tool names and cost (the event
    cannot know the findings and estimates the report adds later)."""
    trace = tail(interleaved_lines(), None, batch=7)
    context = trace_context(trace)
    rows = [call for view in context["agent_loops"] for call in view.calls]
    rows += context["side_calls"]
    by_index = {call["index"]: call for call in sent(trace, "call")}
    assert sorted(row.index for row in rows) == sorted(by_index)
    for row in rows:
        event = by_index[row.index]
        assert set(row.marks) == keys(CallRowMarks)
        assert row.marks["tool_names"] == event["tool_names"]
        if event["input_tokens"] is not None and event["status"] == "ok":
            assert row.marks["cost_usd"] == event["cost_usd"]
        findings = [f for f in trace.report["findings"] if f["call"] == row.index]
        assert [f["rule"] for f in row.marks["findings"]] == [f["rule"] for f in findings]
