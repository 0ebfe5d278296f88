"""All rules on the public corpus: no crash on any file, and real findings checked by hand.

Every expected finding below was verified by reading the corpus file (see SOURCES.md and
the comments): these are defects of the recorded loops, not artefacts of the rebuild.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CORPUS, corpus_id
from tests.core.test_detection_corpus import NOT_TRACES, expected_format
from traces.core.analysis.accounting import account
from traces.core.analysis.ingest import analyze_files
from traces.core.analysis.rules.base import Finding
from traces.core.analysis.rules.registry import rules, run_rules
from traces.core.model import Trace
from traces.core.reading.formats.registry import adapters


def _all_corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name not in NOT_TRACES)


def _lint(corpus: Path, relative: str) -> tuple[Trace, list[Finding]]:
    path = corpus / relative
    expected = expected_format(relative)
    assert expected in {adapter.name for adapter in adapters()}, f"no {expected} adapter"
    trace = analyze_files([(path.name, path.read_bytes())])
    return trace, run_rules(trace, account(trace))


def _by_rule(findings: list[Finding]) -> Counter[str]:
    return Counter(finding.rule for finding in findings)


@pytest.mark.corpus
@pytest.mark.parametrize("path", _all_corpus_files(), ids=corpus_id)
def test_every_rule_runs_on_every_corpus_file(path, corpus):
    trace, findings = _lint(corpus, str(path.relative_to(corpus)))
    known = {rule.id for rule in rules()}
    for finding in findings:
        assert finding.rule in known
        assert "\n" not in finding.message and len(finding.message) < 600
        assert finding.call is None or 1 <= finding.call <= len(trace.calls)


@pytest.mark.corpus
def test_claude_trace_haiku_side_calls_stop_at_max_tokens(corpus):
    # SOURCES.md: 18 max_tokens stops, all on the non-streamed haiku side calls (one-token
    # quota probes); the 12 tool calls all got results, so nothing dangles.
    trace, findings = _lint(corpus, "claude_trace_jsonl/claude-trace-dev_test-traffic.jsonl")
    stops = [f for f in findings if f.rule == "max-tokens-stop"]
    assert len(stops) == 18
    assert all("haiku" in (trace.calls[f.call - 1].model or "") for f in stops)
    assert all(f.tool_call_id is None for f in stops)
    assert stops[0].message == (
        "call 1 stopped at the output token limit after 1 output token; raise max_tokens or"
        " ask for less"
    )
    counts = _by_rule(findings)
    assert counts["dangling-tool-call"] == 0
    assert counts["orphan-tool-result"] == counts["missing-tool-use-echo"] == 0
    assert counts["prefix-changed"] == 0  # Claude Code keeps system and tools byte-stable


@pytest.mark.corpus
@pytest.mark.parametrize(
    "name",
    [
        "anthropic_messages_api/test_anthropic_instrumentation_multiple_tool_calling.yaml",
        "openai_chat_completions_api/test_chat_completion_multiple_tools_streaming_with_content.yaml",
    ],
)
def test_single_recorded_calls_leave_their_parallel_calls_dangling(corpus, name):
    # One request/response pair whose response asks two tools: the recording ends there.
    _, findings = _lint(corpus, name)
    dangling = [f for f in findings if f.rule == "dangling-tool-call"]
    assert len(dangling) == 2 and {f.call for f in dangling} == {1}


@pytest.mark.corpus
def test_tau_bench_reused_ids_and_actionable_errors(corpus):
    # SOURCES.md: 11 of these 50 records reuse a tool_call_id for a different call; counted
    # by hand, 17 reuses in all (call_HGn16KZh9oNCruxsMJ4gYXan in task 0 among them). The 17
    # results starting with "Error" all say what failed ("Error: not enough seats on flight
    # HAT229"), so none is bare.
    _, findings = _lint(corpus, "tau_bench_messages/gpt-4o-airline.first50records.json")
    reused = [f for f in findings if f.rule == "duplicate-tool-call-id"]
    assert len(reused) == 17
    assert len({f.loop for f in reused}) == 11
    first = next(f for f in reused if f.tool_call_id == "call_HGn16KZh9oNCruxsMJ4gYXan")
    assert "(search_onestop_flight) after call" in first.message
    assert "(search_direct_flight)" in first.message
    assert _by_rule(findings)["bare-error-result"] == 0


@pytest.mark.corpus
def test_swe_agent_replay_reuses_ids(corpus):
    # The replayed trajectory reuses call ids: call_5iDdbOYybq7L19vqXmR0DPaU names four bash
    # calls, call_ahToD2vM0aQWJPkRmy5cumru find_file then open, call_q3VsBszvsntfyPkxeHq4i5N1
    # insert then edit: 5 reuses of 3 ids, each id reported once (with its later reuses).
    _, findings = _lint(corpus, "swe_agent_traj/marshmallow-1867__function_calling_replace.traj")
    reused = [f for f in findings if f.rule == "duplicate-tool-call-id"]
    assert Counter(f.tool_call_id for f in reused) == {
        "call_5iDdbOYybq7L19vqXmR0DPaU": 1,
        "call_ahToD2vM0aQWJPkRmy5cumru": 1,
        "call_q3VsBszvsntfyPkxeHq4i5N1": 1,
    }
    bash = next(f for f in reused if f.tool_call_id == "call_5iDdbOYybq7L19vqXmR0DPaU")
    assert "and 2 later calls after call" in bash.message


@pytest.mark.corpus
def test_claude_code_session_errors_and_traces(corpus):
    # Of the 13 is_error results, one is Claude Code's bare "Sibling tool call errored";
    # the others say what failed. Two Bash results are raw stack traces (an esbuild crash
    # with 8 JavaScript frames, a Python JSONDecodeError). The compaction is a rewrite.
    trace, findings = _lint(
        corpus, "claude_code_jsonl/spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
    )
    (bare,) = [f for f in findings if f.rule == "bare-error-result"]
    assert bare.tool_call_id == "toolu_01DCLR3rSnMNKmrb1EwDYB8V"
    assert "'<tool_use_error>Sibling tool call errored</tool_use_error>'" in bare.message
    traces = {f.tool_call_id: f.message for f in findings if f.rule == "stack-trace-result"}
    assert "raw JavaScript stack trace (8 frames)" in traces["toolu_01MqFE67xAqENpnkYuWd77EM"]
    assert "raw Python stack trace" in traces["toolu_01JdD9F2xLv2N3eakYVYEqEL"]
    assert "JSONDecodeError" in traces["toolu_01JdD9F2xLv2N3eakYVYEqEL"]
    (rewrite,) = [f for f in findings if f.rule == "history-rewritten"]
    assert trace.calls[rewrite.call - 1].history_rewritten
    counts = _by_rule(findings)
    assert counts["orphan-tool-result"] == counts["duplicate-tool-call-id"] == 0
    assert counts["unknown-tool"] == counts["invalid-tool-arguments"] == 0  # no tool list


@pytest.mark.corpus
def test_claude_code_subagent_file_error_is_actionable(corpus):
    # The one is_error is "<tool_use_error>File does not exist.</tool_use_error>".
    _, findings = _lint(
        corpus,
        "claude_code_jsonl/codemie_incremental-subagents/turn-2/subagents/agent-a485154.jsonl",
    )
    assert _by_rule(findings)["bare-error-result"] == 0


@pytest.mark.corpus
def test_openai_follow_up_request_dropped_its_tools(corpus):
    # The second interaction's request carries no `tools` (the first declares
    # get_current_weather): a byte change of the prefix.
    _, findings = _lint(
        corpus, "openai_chat_completions_api/test_chat_completion_tool_calls_with_content.yaml"
    )
    assert [(f.rule, f.call, f.message) for f in findings if f.rule == "prefix-changed"] == [
        (
            "prefix-changed",
            2,
            "call 2 changed the tool definitions sent in call 1: removed get_current_weather;"
            " prompt caching misses from there, keep the prefix byte-stable",
        )
    ]
    counts = _by_rule(findings)
    assert counts["dangling-tool-call"] == counts["orphan-tool-result"] == 0
    assert counts["invalid-tool-arguments"] == counts["unknown-tool"] == 0
