"""The OpenTelemetry GenAI adapter on the corpus fixtures, a hand-written OTLP export and bad input.

Corpus expectations were read off the files by eye (they are small): each
openinference/otel fixture is one chat span whose input holds user -> assistant
(text + tool_call 1234) -> tool result 1234, answered with text, 97 input and 52 output
tokens; the tool-execution fixture is a lone execute_tool span for id 1234. The Vercel
file holds 10 ReadableSpan dumps: 4 provider calls (`*.doGenerate` / `*.doStream`,
usage 14/20, 50/9, 63/156, 15/112), 4 wrapper spans repeating them, and 2 embedding
spans; every span has its own trace id.
"""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import corpus_files, corpus_id
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report

FIXTURE = "openinference_genai_fixture_"
CHAT_FIXTURES = {
    # file: stop reason as the fixture states it
    f"{FIXTURE}openinference_client_span_input_output_only.json": "end_turn",
    f"{FIXTURE}openinference_client_span_tool_calls.json": "end_turn",
    f"{FIXTURE}otel_genai_client_span_tool_calls.json": "end_turn",
    f"{FIXTURE}otel_genai_deprecated_client_span_tool_calls.json": "end_turn",
}


@pytest.mark.parametrize(
    "path",
    [p for p in corpus_files("otel_genai") if p.name in CHAT_FIXTURES],
    ids=corpus_id,
)
def test_chat_span_fixtures_rebuild_one_call_with_a_paired_tool(path):
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert trace.format == "otel-genai"
    assert not trace.line_errors
    assert len(trace.calls) == 1
    call = trace.calls[0]
    assert call.model == "gpt-4-0613"
    assert call.stop_reason == CHAT_FIXTURES[path.name]
    assert (call.usage.input_tokens, call.usage.output_tokens) == (97, 52)
    assert [m.role for m in call.appended] == ["user", "assistant", "tool"]
    assert [b.kind for b in call.appended[1].blocks] == ["text", "tool_use"]
    assert call.appended[1].blocks[1].input == {"location": "Paris"}
    assert call.appended[2].blocks[0].text.startswith("rainy, 57")
    assert [b.text[:26] for b in call.response.blocks] == ["The weather in Paris is cu"]
    # The call and its result are both history of this one request: paired by id.
    [run] = trace.tool_runs
    assert (run.id, run.name, run.status, run.call) == ("1234", "get_weather", "paired", None)


def test_tool_execution_span_alone_is_one_call_with_its_output(corpus):
    # The span records the call (name, arguments) and its output: a whole tool run,
    # though no model call in the file asked for it (counts.json: 1 call, 1 result).
    path = corpus / "otel_genai" / f"{FIXTURE}otel_genai_tool_execution_span.json"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert trace.format == "otel-genai"
    assert trace.calls == ()
    [run] = trace.tool_runs
    assert (run.id, run.name, run.status, run.call) == ("1234", "get_weather", "paired", None)
    assert run.input == {"city": "New York"}
    assert run.result_text.startswith('{"status": "success", "report": "The weather in New York')
    assert not run.is_error and run.error_inferred is None
    assert build_report(trace)["outcome"]["kind"] == "unknown"


def test_vercel_spans_keep_provider_calls_and_skip_wrappers_and_embeddings(corpus):
    path = corpus / "otel_genai" / "vercel_ai_sdk_v6_all-spans.json"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert trace.format == "otel-genai"
    assert not trace.line_errors  # skipped spans are not errors
    assert [c.extra["span"]["name"] for c in trace.calls] == [
        "ai.generateText.doGenerate",
        "ai.generateText.doGenerate",
        "ai.generateObject.doGenerate",
        "ai.streamText.doStream",
    ]
    usage = [(c.usage.input_tokens, c.usage.output_tokens) for c in trace.calls]
    assert usage == [(14, 20), (50, 9), (63, 156), (15, 112)]
    assert {c.model for c in trace.calls} == {"gpt-4o-mini-2024-07-18"}
    assert len(trace.loops) == 4  # every span carries its own trace id
    assert trace.tool_runs == ()
    multi_turn = trace.calls[1]
    assert [m.role for m in multi_turn.appended] == ["system", "user", "assistant", "user"]
    assert multi_turn.system == "You are a helpful assistant."
    assert multi_turn.response.blocks[0].text == "3 + 3 equals 6."
    # ReadableSpan HrTime [seconds, nanos]: 1770131994.023 -> 1770131997.057285833
    assert multi_turn.started_at == pytest.approx(1770131994.023)
    assert multi_turn.duration_s == pytest.approx(3.034285833, abs=1e-6)
    assert build_report(trace)["totals"]["output_tokens"] == 20 + 9 + 156 + 112


def test_hand_written_otlp_export_report_is_golden():
    trace = analyze_bytes(golden_input("otel-genai/otlp_export.json"), filename="export.json")
    report = build_report(trace)
    assert_golden("otel-genai/otlp_export.report.json", report)
    # Spans are listed in end order; calls come out in start order, one loop per trace.
    assert [loop.key for loop in trace.loops] == [
        "5b8efff798038103d269b633813fc60c",
        "0af7651916cd43dd8448eb211c80319c",
    ]
    first = trace.calls[0]
    assert first.system == "You are a weather bot."
    assert first.tools[0]["name"] == "get_weather"
    assert (first.usage.input_tokens, first.usage.cache_read_tokens) == (200, 1000)
    runs = {run.id: run for run in trace.tool_runs}
    assert runs["call_paris"].duration_s == pytest.approx(0.3, abs=1e-6)
    # The tool span's ERROR status survives the pairing of its (plain) result.
    assert runs["call_rome"].is_error and not runs["call_paris"].is_error
    # "call_oslo " (stray space) is not "call_oslo": a dangling call and an orphan result.
    assert runs["call_oslo"].status == "dangling"
    assert runs["call_oslo "].status == "orphan"
    assert trace.calls[3].stop_reason == "max_tokens"
    assert first.extra["service"] == "weather-agent"


def _span_line(span_id: str, start: int, attributes: dict) -> str:
    span = {
        "traceId": "t1",
        "spanId": span_id,
        "name": "chat",
        "startTimeUnixNano": str(start * 10**9),
        "endTimeUnixNano": str((start + 1) * 10**9),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).decode()


def test_bad_lines_become_line_errors_and_the_rest_is_ingested():
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]',
        "gen_ai.output.messages": '[{"role":"assistant","parts":[{"type":"text","content":"yo"}]}]',
    }
    good = _span_line("s1", 1_700_000_000, chat)
    # Another span: the same span id exported again is one call (otel_layers).
    odd_span = _span_line("s2", 1_700_000_002, chat).replace('"spans":[', '"spans":[7,')
    lines = [
        good,
        good[:-40],
        "[1, 2]",
        '{"hello": "world"}',
        odd_span,
    ]
    trace = analyze_bytes(("\n".join(lines) + "\n").encode(), filename="spans.jsonl")
    assert trace.format == "otel-genai"
    errors = {e.line: e.message for e in trace.line_errors}
    assert sorted(errors) == [2, 3, 4, 5]
    assert "cut off" in errors[2]
    assert "expected a JSON object" in errors[3]
    assert "not an OpenTelemetry span" in errors[4]
    assert "span #1 is not a JSON object" in errors[5]
    assert [c.line for c in trace.calls] == [1, 5]


def test_deprecated_flattened_and_openinference_attributes_with_cache_usage():
    spans = [
        {
            "name": "openai.chat",
            "context": {"trace_id": "0xabc", "span_id": "0x1"},
            "start_time": "2025-01-01T00:00:00Z",
            "end_time": "2025-01-01T00:00:02Z",
            "status": {"status_code": "ERROR", "description": "RateLimitError"},
            "attributes": {
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.prompt.0.role": "user",
                "gen_ai.prompt.0.content": "list files",
                "gen_ai.usage.prompt_tokens": 50,
            },
        },
        {
            "name": "ChatCompletion",
            "context": {"trace_id": "0xabc", "span_id": "0x2"},
            "start_time": "2025-01-01T00:00:03Z",
            "end_time": "2025-01-01T00:00:04Z",
            "attributes": {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": "list files",
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_9",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "ls",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{bad",
                "llm.tools.0.tool.json_schema": '{"type":"function","function":{"name":"ls"}}',
                "llm.token_count.prompt": 120,
                "llm.token_count.prompt_details.cache_read": 100,
                "llm.token_count.completion": 7,
            },
        },
        {"name": "embed", "context": {"trace_id": "0xabc", "span_id": "0x3"},
         "attributes": {"openinference.span.kind": "EMBEDDING", "llm.token_count.prompt": 4}},
    ]  # fmt: skip
    trace = analyze_bytes(orjson.dumps(spans), filename="python-spans.json")
    assert trace.format == "otel-genai"
    failed, asked = trace.calls
    assert failed.status == "error" and failed.error == "RateLimitError"
    assert failed.usage.input_tokens == 50 and failed.usage.output_tokens == 0
    assert failed.appended[0].blocks[0].text == "list files"
    assert asked.loop == failed.loop  # one trace id, one loop
    assert (asked.usage.input_tokens, asked.usage.cache_read_tokens) == (20, 100)
    assert asked.stop_reason == "tool_use"
    assert asked.tools == ({"type": "function", "function": {"name": "ls"}},)
    [run] = trace.tool_runs
    assert (run.id, run.name, run.input, run.status) == ("call_9", "ls", "{bad", "dangling")


def test_prompt_and_completion_carried_by_span_events():
    span = {
        "traceId": "t9",
        "spanId": "s9",
        "name": "chat claude",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000002500000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "900"}},
            {"key": "gen_ai.usage.cache_creation.input_tokens", "value": {"intValue": "600"}},
            {"key": "gen_ai.usage.cache_read.input_tokens", "value": {"intValue": "200"}},
        ],
        "events": [
            {
                "name": "gen_ai.content.prompt",
                "attributes": [
                    {
                        "key": "gen_ai.prompt",
                        "value": {"stringValue": '[{"role":"user","content":"hi"}]'},
                    }
                ],
            },
            {
                "name": "gen_ai.content.completion",
                "attributes": [
                    {
                        "key": "gen_ai.completion",
                        "value": {
                            "stringValue": '[{"role":"assistant","content":"hello","finish_reason":"stop"}]'
                        },
                    }
                ],
            },
        ],
    }
    trace = analyze_bytes(orjson.dumps([span]))
    [call] = trace.calls
    assert call.appended[0].blocks[0].text == "hi"
    assert call.response.blocks[0].text == "hello" and call.stop_reason == "end_turn"
    usage = call.usage
    assert (usage.input_tokens, usage.cache_write_tokens, usage.cache_read_tokens) == (
        100,
        600,
        200,
    )
    assert call.duration_s == pytest.approx(2.5)


def test_a_framework_llm_span_around_the_provider_span_is_one_call():
    def span(span_id, parent, attributes):
        entry = {
            "traceId": "t2",
            "spanId": span_id,
            "name": span_id,
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
        }
        return entry | ({"parentSpanId": parent} if parent else {})

    messages = '[{"role":"user","content":"hi"}]'
    export = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            span(
                                "provider",
                                "framework",
                                {
                                    "openinference.span.kind": "LLM",
                                    "llm.input_messages.0.message.role": "user",
                                    "llm.input_messages.0.message.content": "hi",
                                },
                            ),
                            span(
                                "framework",
                                "chain",
                                {"openinference.span.kind": "LLM", "input.value": messages},
                            ),
                            span("chain", None, {"openinference.span.kind": "CHAIN"}),
                        ]
                    }
                ]
            }
        ]
    }
    trace = analyze_bytes(orjson.dumps(export))
    assert [c.extra["span"]["span_id"] for c in trace.calls] == ["provider"]


def _openinference_span(span_id: str, start: int, messages: list[tuple[str, object]]) -> dict:
    """An OpenInference LLM span whose message contents are JSON strings of blocks."""
    attributes = {"openinference.span.kind": "LLM", "llm.model_name": "claude-sonnet-4-5"}
    for position, (role, content) in enumerate(messages):
        prefix = f"llm.input_messages.{position}.message"
        attributes[f"{prefix}.role"] = role
        attributes[f"{prefix}.content"] = (
            content if isinstance(content, str) else orjson.dumps(content).decode()
        )
    return {
        "traceId": "t-blocks",
        "spanId": span_id,
        "name": "anthropic.messages.create",
        "startTimeUnixNano": str(start * 10**9),
        "endTimeUnixNano": str((start + 1) * 10**9),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }


def test_content_serialised_as_a_json_string_of_blocks_is_read_as_blocks():
    # Anthropic tool_use / tool_result lists written as JSON text into
    # llm.input_messages.N.message.content: read as blocks, the result pairs by id.
    use = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"}
    typed_json = '[{"city": "Paris"}]'  # a user who typed JSON keeps their text
    first = [("user", typed_json)]
    second = [*first, ("assistant", [use]), ("user", [result])]
    export = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            _openinference_span("s1", 1, first),
                            _openinference_span("s2", 3, second),
                        ]
                    }
                ]
            }
        ]
    }
    trace = analyze_bytes(orjson.dumps(export))
    assert len(trace.calls) == 2
    assert trace.calls[0].appended[0].blocks[0].kind == "text"
    assert trace.calls[0].appended[0].blocks[0].text == typed_json
    echo, carried = trace.calls[1].appended
    assert [b.kind for b in echo.blocks] == ["tool_use"]
    assert [b.kind for b in carried.blocks] == ["tool_result"]
    [run] = trace.tool_runs
    assert (run.id, run.name, run.status, run.result_text) == (
        "toolu_1",
        "read_file",
        "paired",
        "A",
    )
    assert run.input == {"path": "a"}


def test_gen_ai_prompt_content_serialised_as_blocks_pairs_its_results():
    # OpenLLMetry's Anthropic instrumentation writes each prompt message's content as the
    # JSON text of its blocks, in flattened gen_ai.prompt.N.* attributes.
    use = {"type": "tool_use", "id": "toolu_9", "name": "search", "input": {"q": "otel"}}
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_9",
        "content": [{"type": "text", "text": "3 hits"}],
    }
    attributes = {
        "gen_ai.system": "Anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "search for otel",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.content": orjson.dumps([use]).decode(),
        "gen_ai.prompt.2.role": "user",
        "gen_ai.prompt.2.content": orjson.dumps([result]).decode(),
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "Found 3 hits.",
    }
    trace = analyze_bytes(orjson.dumps(attributes))
    assert trace.format == "otel-genai"
    [call] = trace.calls
    assert [b.kind for m in call.appended for b in m.blocks] == ["text", "tool_use", "tool_result"]
    [run] = trace.tool_runs
    assert (run.id, run.name, run.status, run.result_text) == (
        "toolu_9",
        "search",
        "paired",
        "3 hits",
    )
