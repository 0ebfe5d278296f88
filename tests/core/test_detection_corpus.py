"""Every corpus file is detected as the right format and rebuilds without a crash."""

from __future__ import annotations

import pytest

from tests.conftest import CORPUS, corpus_id
from traces.core.formats.registry import adapters
from traces.core.ingest import analyze_files
from traces.core.report import build_report

EXPECTED_FORMAT = {
    "anthropic_messages_api": "anthropic-messages",
    "claude_agent_sdk_stream": "claude-agent-sdk",
    "langfuse_export": "langfuse",
    "openhands_events": "openhands-events",
    "claude_trace_jsonl": "anthropic-messages",
    "claude_code_jsonl": "claude-code",
    "codex_rollout_jsonl": "codex-rollout",
    "inspect_ai_eval_log": "inspect-ai",
    "openai_chat_completions_api": "openai-chat",
    "openai_responses_api": "openai-responses",
    "otel_genai": "otel-genai",
    "swe_agent_traj": "message-list",
    "tau_bench_messages": "message-list",
}


def _all_corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(
        p for p in CORPUS.rglob("*") if p.is_file() and p.name not in {"SOURCES.md", "counts.json"}
    )


@pytest.mark.corpus
@pytest.mark.parametrize("path", _all_corpus_files(), ids=corpus_id)
def test_corpus_file_is_detected_and_rebuilt(path, corpus):
    folder = path.relative_to(corpus).parts[0]
    expected = EXPECTED_FORMAT[folder]
    if expected not in {a.name for a in adapters()}:
        pytest.skip(f"the {expected} adapter is not written yet")
    trace = analyze_files([(path.name, path.read_bytes())])
    assert trace.format == expected
    report = build_report(trace)
    assert report["totals"]["calls"] + report["totals"]["tool_runs"] >= 1
    assert report["schema"] == "loop-inspector/report/v1"
