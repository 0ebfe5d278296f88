"""A page summary (traces/core/outputs/page_summary.py), read back as stored (JSON), gives
the trace page the figures the whole report gives: on real corpus traces, its cards,
outcome and token table, its strip of each loop, its side calls' rows and its default
what-if panel. The page built from it is compared whole in tests/web/test_page_summary.py
(a long generated session: corpus traces are too short to be given a summary)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import CORPUS
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.page_figures import TraceCounts, page_figures
from traces.core.outputs.page_summary import (
    FINDINGS_PER_PAGE,
    accounting_facts,
    default_what_if,
    page_summary,
    without_scenario_calls,
)
from traces.core.outputs.render.sequence import sequence_window
from traces.core.outputs.render.sequence.index import diagram_index
from traces.core.outputs.render.sequence.overview import draw_overview
from traces.core.outputs.report import build_report

FILES = sorted(
    [
        *(CORPUS / "claude_code_jsonl").glob("*.jsonl"),
        *(CORPUS / "codex_rollout_jsonl").glob("*.jsonl"),
        *(CORPUS / "claude_trace_jsonl").glob("*.jsonl"),
    ]
)
COUNTS: TraceCounts = {
    "calls": 12,
    "failed_calls": 1,
    "tool_runs": 3,
    "input_tokens": 100,
    "output_tokens": 10,
    "cache_read_tokens": 5,
    "cache_write_tokens": 1,
    "lines": 40,
    "line_errors": 0,
    "wall_time_s": 3.5,
}


def stored(value):
    """As the database gives it back."""
    return orjson.loads(orjson.dumps(value))


@pytest.fixture(scope="module", params=FILES, ids=lambda path: path.name[:40])
def corpus_report(request) -> dict:
    path: Path = request.param
    return stored(build_report(analyze_files([(path.name, path.read_bytes())])))


def test_the_corpus_has_traces_to_compare(corpus):
    assert len(FILES) >= 4


def test_the_figures_from_a_summary_are_the_report_figures(corpus_report):
    summary = stored(page_summary(corpus_report))
    small = {**summary["report"], "loops": corpus_report["loops"]}
    for running in (False, True):
        whole = page_figures(corpus_report, COUNTS, running=running, rule_count=30)
        whole["findings"]["order"] = []  # the page never prints it
        assert page_figures(
            small, COUNTS, running=running, rule_count=30, digest=summary["digest"]
        ) == stored(whole)
    assert summary["accounting"] == stored(accounting_facts(corpus_report))
    assert summary["findings_head"] == corpus_report["findings"][:FINDINGS_PER_PAGE]
    assert summary["call_count"] == len(corpus_report["calls"])


def test_a_strip_from_a_summary_is_the_strip_from_the_report(corpus_report):
    summary = stored(page_summary(corpus_report))
    index = diagram_index(corpus_report)
    drawn = 0
    for loop in corpus_report["loops"]:
        if len(loop["calls"]) < 2:
            assert str(loop["index"]) not in summary["overview"]
            continue
        meta = sequence_window(corpus_report, loop=loop["index"], start=2, window=10)
        marks = summary["overview"][str(meta.loop)]
        from_summary = draw_overview({}, meta, marks=marks).to_string()
        assert from_summary == draw_overview(corpus_report, meta, index=index).to_string()
        drawn += 1
    assert drawn or not any(len(loop["calls"]) > 1 for loop in corpus_report["loops"])


def test_side_calls_in_a_summary_carry_what_their_rows_show(corpus_report):
    summary = stored(page_summary(corpus_report))
    calls = {call["index"]: call for call in corpus_report["calls"]}
    singles = [loop["calls"][0] for loop in corpus_report["loops"] if len(loop["calls"]) == 1]
    assert sorted(int(index) for index in summary["side_calls"]) == sorted(singles)[:200]
    for index, facts in summary["side_calls"].items():
        assert facts["call"] == calls[int(index)]
        for position, finding in facts["findings"]:
            assert corpus_report["findings"][position] == finding
            assert finding["call"] == int(index)
        for position, run in facts["runs"]:
            assert corpus_report["tool_runs"][position] == run
            assert int(index) in (run.get("call"), run.get("result_call"))


def test_the_default_what_if_in_a_summary_is_the_report_panel(corpus_report):
    summary = stored(page_summary(corpus_report))
    panel = default_what_if(corpus_report)
    assert summary["what_if"] == stored(panel)
    if panel is not None:
        assert all("calls" not in s for s in summary["what_if"]["what_if"]["scenarios"])
        assert summary["report"]["what_if"] == stored(
            without_scenario_calls(corpus_report["what_if"])
        )


@pytest.fixture(scope="module")
def long_report() -> dict:
    """A just-built report of a generated session (every rule and what-if lever has
    something to find), as `store_report_parts` is given it."""
    from tests.core.long_session import make_session

    return build_report(analyze_files([("session.jsonl", make_session(600))]))


def test_summary_of_a_just_built_report_is_the_one_computed_from_scratch(long_report) -> None:
    """Storing parts reuses the report's default what-if and its diagram index
    (`current`, `index`): the summary stored is the one computed again from the stored
    report, whole."""
    reused = page_summary(long_report, index=diagram_index(long_report), current=True)
    assert stored(reused) == stored(page_summary(stored(long_report)))
    assert reused["what_if"] is not None
    assert reused["what_if"]["what_if"]["scenarios"]


def test_a_stored_reports_what_if_is_computed_again(long_report) -> None:
    """Without `current` (a report read back, maybe of older code) the report's own
    what-if is never taken as the panel's: it is computed from the report again."""
    stale = stored(long_report)
    scenarios = [{**scenario, "stale": True} for scenario in stale["what_if"]["scenarios"]]
    stale["what_if"] = {**stale["what_if"], "scenarios": scenarios}
    panel = default_what_if(stale)
    assert panel is not None
    expected = without_scenario_calls(stored(long_report)["what_if"])["scenarios"]
    assert panel["what_if"]["scenarios"] == expected
    reused = default_what_if(stale, current=True)  # trusted, as a caller that just built it
    assert reused is not None
    assert all(scenario["stale"] for scenario in reused["what_if"]["scenarios"])
