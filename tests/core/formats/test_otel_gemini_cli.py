"""A real Gemini CLI run's telemetry, as the receiver stored it (issue 23).

tests/golden/otel-genai/gemini_cli_telemetry.jsonl.gz: Gemini CLI 0.61.0 from the npm
registry, `gemini -p "What does README.md say?" --yolo` with traces, logs and prompts on
(`GEMINI_TELEMETRY_*`, OTLP over HTTP) and `GOOGLE_GEMINI_BASE_URL` at a local stand-in
of the Gemini API that answers the first request with a `read_file` call and the second
with text; its exports went to the receiver, which stored them as these two lines (the
spans, then the log records). Seen in it: every `llm_call` span is a trace of its own,
linked by `gen_ai.conversation.id`; the `tool_call` span's parent is a
`schedule_tool_calls` span; the request's `gen_ai.client.inference.operation.details`
record is logged inside its `llm_call` span, the response's one after the stream with no
span or trace id at all, so only its conversation, usage and time tie it to its call.
"""

from __future__ import annotations

import gzip

import pytest

from tests.golden import golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report

CALL_ID = "read_file__read_file_1796142416809_0"


def lines() -> list[bytes]:
    data = gzip.decompress(golden_input("otel-genai/gemini_cli_telemetry.jsonl.gz"))
    return [line for line in data.splitlines() if line.strip()]


@pytest.mark.parametrize("order", ["spans first", "logs first"])
def test_a_real_run_is_two_calls_and_one_tool_run(order):
    found = lines()
    assert len(found) == 2
    if order == "logs first":
        found.reverse()
    trace = analyze_bytes(b"\n".join(found) + b"\n", filename="gemini-cli.jsonl")
    assert trace.format == "otel-genai"
    assert not trace.line_errors
    report = build_report(trace)
    calls = report["calls"]
    assert [(c["stop_reason"], c["input_tokens"], c["output_tokens"]) for c in calls] == [
        ("tool_use", 1100, 12),
        ("end_turn", 1300, 12),
    ]
    assert len({c["loop"] for c in calls}) == 1
    (run,) = report["tool_runs"]
    assert (run["id"], run["name"], run["status"]) == (CALL_ID, "read_file", "paired")
    assert run["duration_s"] is not None
    assert report["findings"] == []  # no unknown tool, no prefix change, no dangling call
