"""Every corpus file is detected as the right format and rebuilds without a crash."""

from __future__ import annotations

import pytest

from tests.conftest import CORPUS, corpus_id
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.formats.registry import adapters

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
    "vcr_parsed_body": "openai-chat",
    "vcr_gzip_binary": "openai-responses",
    "mcp_jsonrpc": "openai-chat",
    "gemini_api": "gemini",
    "bedrock_converse": "bedrock-converse",
}
EXPECTED_FORMAT_BY_FILE = {
    # a folder of one cassette shape whose files record different APIs
    "vcr_gzip_binary/openllmetry_agno_test_team_discussion.yaml": "openai-chat",
}
NOT_TRACES = {"SOURCES.md", "counts.json"}


def expected_format(relative: str) -> str:
    """The format a corpus file (path relative to the corpus) must be detected as."""
    if relative in EXPECTED_FORMAT_BY_FILE:
        return EXPECTED_FORMAT_BY_FILE[relative]
    return EXPECTED_FORMAT[relative.split("/")[0]]


def _all_corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.name not in NOT_TRACES)


@pytest.mark.corpus
@pytest.mark.parametrize("path", _all_corpus_files(), ids=corpus_id)
def test_corpus_file_is_detected_and_rebuilt(path, corpus):
    expected = expected_format(str(path.relative_to(corpus)))
    assert expected in {a.name for a in adapters()}, f"no {expected} adapter is registered"
    trace = analyze_files([(path.name, path.read_bytes())])
    assert trace.format == expected
    report = build_report(trace)
    assert report["totals"]["calls"] + report["totals"]["tool_runs"] >= 1
    assert report["schema"] == "loop-inspector/report/v1"
