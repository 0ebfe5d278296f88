"""The trace page's summary figures (traces/core/outputs/page_figures.py): what a card,
the outcome line, the token table and a what-if row say, from a report and row counts.
The page and a live viewer print these strings as they are, so they are checked here to
the character."""

from __future__ import annotations

from traces.core.outputs.page_figures import (
    RUNNING_STRONG,
    TraceCounts,
    finding_key,
    loop_counts,
    page_figures,
    scenario_cells,
)

COUNTS: TraceCounts = {
    "calls": 1234,
    "failed_calls": 2,
    "tool_runs": 7,
    "input_tokens": 10_000,
    "output_tokens": 999,
    "cache_read_tokens": 20_000,
    "cache_write_tokens": 5,
    "lines": 1,
    "line_errors": 3,
    "wall_time_s": 65.0,
}

REPORT = {
    "loops": [{"calls": [1, 2, 3]}, {"calls": [4]}, {"calls": [5, 6]}],
    "totals": {
        "buckets": {"prefix": 300, "tool_results": 100, "replayed_output": 100, "other": 0},
        "output_tokens": 999,
        "cost_usd": {"actual": 0.0123, "uncached": 1.5, "prefix_cached": None},
    },
    "accounting": {
        "estimated_calls": 1,
        "encoding": "cl100k_base",
        "prices_source": "a table",
        "unpriced_models": ["<b>m</b>"],
    },
    "findings": [
        {"rule": "a", "severity": "warning", "call": 2, "tool_call_id": None, "loop": 1},
        {"rule": "b", "severity": "info", "call": None, "tool_call_id": "t1", "loop": None},
        {"rule": "c", "severity": "warning", "call": 3, "tool_call_id": None, "loop": 1},
    ],
    "outcome": {"kind": "api_error", "text": "API error: rejected.", "loop": 1, "call": 6},
}


def cards(figures) -> dict:
    return {card["key"]: card for card in figures["cards"]}


def test_the_cards_say_what_the_counts_and_report_hold():
    figures = page_figures(REPORT, COUNTS, running=False, rule_count=22)
    shown = cards(figures)
    assert [card["label"] for card in figures["cards"]] == [
        "Calls", "Tool runs", "Input tokens", "Output tokens", "Cost", "Findings", "Wall time",
    ]  # fmt: skip
    assert shown["calls"]["text"] == "1,234"
    assert [b["text"] for b in shown["calls"]["badges"]] == ["2 failed"]
    assert shown["calls"]["note"] == [{"text": "2 loops + 1 side call", "href": None}]
    # The breakdown's total, as the token table says it (the row's columns count reported
    # usage only): "≈" when some calls were estimated.
    assert (shown["input"]["text"], shown["input"]["title"]) == (
        "≈ 500",
        "≈ 500 (tiktoken estimate where usage was not reported)",
    )
    assert (shown["output"]["text"], shown["output"]["title"]) == ("999", "999")
    assert shown["input"]["note"][0]["text"] == "cache 20.0 k read · 5 written"
    assert shown["input"]["note_title"] == "cache read 20,000 · cache write 5"
    assert shown["cost"]["text"] == "$0.012"
    silent = cards(
        page_figures({"calls": [{"output_tokens": None}]}, COUNTS, running=False, rule_count=22)
    )
    assert (silent["output"]["text"], silent["input"]["text"]) == ("not reported", "30.0 k")
    assert "with the stable prefix cached: unknown" in shown["cost"]["title"]
    assert [b["text"] for b in shown["cost"]["badges"]] == ["≈ est."]
    assert shown["cost"]["note"] == [{"text": "no price for <b>m</b>", "href": "#unpriced-note"}]
    assert [b["text"] for b in shown["findings"]["badges"]] == ["2 warnings", "1 info"]
    assert shown["findings"]["badges_href"] == "#findings-title"
    assert [part["text"] for part in shown["wall"]["note"]] == ["1 line", " · ", "3 unreadable"]
    assert shown["wall"]["text"] == "1 min 5 s"


def test_the_outcome_is_running_until_the_trace_closes():
    live = page_figures(REPORT, COUNTS, running=True, rule_count=22)["outcome"]
    closed = page_figures(REPORT, COUNTS, running=False, rule_count=22)["outcome"]
    assert (live["running"], live["strong"], live["call"]) == (True, RUNNING_STRONG, None)
    assert closed == {
        "kind": "api_error",
        "running": False,
        "strong": "API error: rejected.",
        "rest": "",
        "call": 6,
    }


def test_the_token_table_and_the_findings_order():
    figures = page_figures(REPORT, COUNTS, running=False, rule_count=22)
    tokens = figures["tokens"]
    assert [(r["tokens_text"], r["share_text"], r["bar_width"]) for r in tokens["rows"]] == [
        ("≈ 300", "60%", "60.0%"),
        ("≈ 100", "20%", "20.0%"),
        ("≈ 100", "20%", "20.0%"),
        ("≈ 0", "0%", "0.0%"),
    ]
    assert (tokens["input_total"], tokens["output_total"]) == ("≈ 500", "999")
    assert (tokens["actual"], tokens["uncached"], tokens["prefix_cached"]) == (
        "$0.012",
        "$1.50",
        "unknown",
    )
    assert tokens["note"] == (
        "≈ marks estimates: 1 call reported no usage and was counted with tiktoken "
        "cl100k_base. Prices: a table."
    )
    assert tokens["unpriced"] == [{"model": "<b>m</b>", "query": "%3Cb%3Em%3C/b%3E"}]
    findings = figures["findings"]
    assert findings["order"] == ["a|2||1", "b||t1|", "c|3||1"]
    assert findings["counts"] == {"error": 0, "warning": 2, "info": 1}
    assert finding_key(REPORT["findings"][1]) == "b||t1|"
    assert figures["what_if"] is None


def test_loops_of_one_call_are_side_calls_unless_there_is_no_other():
    assert loop_counts([{"calls": [1]}, {"calls": [2]}]) == (1, 0)
    assert loop_counts([{"calls": [1, 2]}, {"calls": [3]}]) == (1, 1)
    assert loop_counts([]) == (0, 0)
    empty = page_figures({}, COUNTS | {"failed_calls": 0, "line_errors": 0}, running=True,
                         rule_count=22)  # fmt: skip
    shown = cards(empty)
    assert shown["calls"]["badges"] == [] and shown["findings"]["empty"] == "none"
    assert shown["cost"]["note"][0]["text"] == "uncached unknown"
    assert [part["text"] for part in shown["wall"]["note"]] == ["1 line"]


def test_a_what_if_row_reads_as_the_panel_prints_it():
    assert scenario_cells(
        {"id": "cap-results", "status": "ok", "title": "Cap", "tokens_saved": 1234,
         "exact": False, "usd_saved": 0.5, "percent_usd": 12.345, "seconds_saved": None}
    ) == {"id": "cap-results", "status": "ok", "title": "Cap", "tokens_saved": "≈ 1,234",
          "usd_saved": "$0.500", "percent_usd": "12.3%", "seconds_saved": "—"}  # fmt: skip
    assert (
        scenario_cells({"id": "prompt-cache", "tokens_saved": 5, "usd_saved": -0.1})["tokens_saved"]
        == "—"
    )
    concurrent = scenario_cells({"id": "concurrent-tools", "seconds_saved": 2.5})
    assert (concurrent["usd_saved"], concurrent["seconds_saved"]) == ("—", "2.5 s")
