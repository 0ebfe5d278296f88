"""The span layers of one call read as one call (otel_layers), in every order they come.

The two layers are the attributes the real Anthropic SDK 2.15 and OpenInference's
anthropic instrumentation set (dumped from a run against the fake upstream, trimmed):
the SDK's `anthropic.messages.create` span has usage and stop reason and no content,
OpenInference's `messages.create` has the messages and its own token counts. Each line
of a file is one export, as the receiver stores them; a file is read line by line like
a live trace.
"""

from __future__ import annotations

import itertools
import json

import orjson
import pytest

from traces.core.analysis.ingest import analyze_bytes

TRACE = "5b8aa5a2d2c872e8321cf37308d69df2"
T0 = 1_764_590_000_000_000_000


def attributes(values: dict) -> list[dict]:
    def typed(value):
        if isinstance(value, bool):
            return {"boolValue": value}
        if isinstance(value, int):
            return {"intValue": str(value)}
        return {"stringValue": value}

    return [{"key": k, "value": typed(v)} for k, v in values.items()]


def span(span_id: str, parent: str | None, name: str, start: float, end: float, attrs: dict):
    found = {
        "traceId": TRACE,
        "spanId": span_id,
        "name": name,
        "startTimeUnixNano": str(T0 + int(start * 1e9)),
        "endTimeUnixNano": str(T0 + int(end * 1e9)),
        "attributes": attributes(attrs),
    }
    if parent:
        found["parentSpanId"] = parent
    return found


def sdk_span(span_id: str, parent: str, start: float, stop: str, tokens: tuple[int, int]):
    return span(
        span_id,
        parent,
        "anthropic.messages.create",
        start + 0.01,
        start + 0.9,
        {
            "gen_ai.provider.name": "anthropic",
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "claude-sonnet-4-6",
            "gen_ai.usage.input_tokens": tokens[0] + 100,
            "gen_ai.usage.cache_read.input_tokens": 100,
            "gen_ai.usage.cache_write.input_tokens": 0,
            "gen_ai.usage.output_tokens": tokens[1],
            "anthropic.message.stop_reason": stop,
        },
    )


def openinference_span(span_id: str, start: float, messages: list, output: dict, usage: bool):
    attrs = {
        "llm.provider": "anthropic",
        "llm.model_name": "claude-sonnet-4-6",
        "openinference.span.kind": "LLM",
        "input.value": json.dumps({"model": "claude-sonnet-4-6", "messages": messages}),
        "input.mime_type": "application/json",
        "output.value": json.dumps(output),
        "output.mime_type": "application/json",
    }
    if usage:
        attrs |= {"llm.token_count.prompt": 1, "llm.token_count.completion": 1}
    return span(span_id, "a0a0a0a0a0a0a0a0", "messages.create", start, start + 1.0, attrs)


QUESTION = {"role": "user", "content": "Weather in Paris?"}
TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"c": "Paris"}}
FIRST = {"id": "msg_1", "role": "assistant", "content": [TOOL_USE], "stop_reason": "tool_use"}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}
SECOND = {"id": "msg_2", "role": "assistant", "content": [{"type": "text", "text": "Rain."}]}
SECOND |= {"stop_reason": "end_turn"}


def layers(usage_outside: bool = False) -> list[dict]:
    """Call 1's SDK span, call 1's OpenInference span, the same for call 2, the agent."""
    history = [QUESTION, {"role": "assistant", "content": [TOOL_USE]}, RESULT]
    return [
        sdk_span("c1c1c1c1c1c1c1c1", "b1b1b1b1b1b1b1b1", 0.0, "tool_use", (50, 20)),
        openinference_span("b1b1b1b1b1b1b1b1", 0.0, [QUESTION], FIRST, usage_outside),
        sdk_span("c2c2c2c2c2c2c2c2", "b2b2b2b2b2b2b2b2", 2.0, "end_turn", (80, 5)),
        openinference_span("b2b2b2b2b2b2b2b2", 2.0, history, SECOND, usage_outside),
        span("a0a0a0a0a0a0a0a0", None, "agent", 0.0, 4.0, {"openinference.span.kind": "AGENT"}),
    ]


def export(*spans: dict) -> bytes:
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


def read(lines: list[bytes]):
    return analyze_bytes(b"\n".join(lines) + b"\n", filename="otlp.jsonl", format_name="otel-genai")


def check(trace) -> None:
    assert not trace.line_errors
    assert [c.stop_reason for c in trace.calls] == ["tool_use", "end_turn"]
    # usage from the SDK's layer (inner first), content from OpenInference's
    assert [(c.usage.input_tokens, c.usage.cache_read_tokens) for c in trace.calls] == [
        (50, 100),
        (80, 100),
    ]
    assert [c.message_count for c in trace.calls] == [1, 3]
    (run,) = trace.tool_runs
    assert (run.id, run.status) == ("toolu_1", "paired")


def test_in_one_export():
    check(read([export(*layers())]))


def test_one_span_per_export_as_a_simple_span_processor_sends_them():
    check(read([export(s) for s in layers()]))


def in_end_order_per_exporter() -> list[tuple[int, ...]]:
    """Every order two exporters (the SDK's spans on one provider, OpenInference's on
    another) can deliver the four spans in, each sending its spans in the order they
    ended: parent before child or after, a call's layers around the other call's."""
    return [
        order
        for order in itertools.permutations(range(4))
        if order.index(0) < order.index(2) and order.index(1) < order.index(3)
    ]


@pytest.mark.parametrize("order", in_end_order_per_exporter())
def test_in_any_order_across_exports(order):
    spans = layers(usage_outside=True)
    lines = [export(spans[i]) for i in order] + [export(spans[4])]
    trace = read(lines)
    assert len(trace.calls) == 2
    assert [c.stop_reason for c in trace.calls] == ["tool_use", "end_turn"]
    assert [c.message_count for c in trace.calls] == [1, 3]


def test_the_same_span_exported_twice_is_one_call():
    spans = layers()
    check(read([export(*spans[:2]), export(*spans[:2]), export(*spans[2:])]))


def test_a_content_less_span_alone_is_still_a_call():
    """The Anthropic SDK's spans with no instrumentation above them: each a call, with
    its usage and stop reason, the last one released when the input ends."""
    spans = [s for s in layers() if s["name"] == "anthropic.messages.create"]
    trace = read([export(s) for s in spans])
    assert [c.stop_reason for c in trace.calls] == ["tool_use", "end_turn"]
    assert [c.usage.output_tokens for c in trace.calls] == [20, 5]


def test_gemini_stream_chunks_join_into_one_response():
    """Gemini CLI writes a streamed response as each chunk's content."""
    call = {"functionCall": {"id": "read_file__1", "name": "read_file", "args": {}}}
    chunks = [
        {"role": "model", "parts": [{"text": "I'll read "}]},
        {"role": "model", "parts": [{"text": "the file."}, call]},
        None,
    ]
    attrs = {
        "gen_ai.operation.name": "llm_call",
        "gen_ai.conversation.id": "session-1",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"text": "Hi"}]}]),
        "gen_ai.output.messages": json.dumps(chunks),
        "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 3,
    }
    trace = read([export(span("d1d1d1d1d1d1d1d1", None, "llm_call", 0, 1, attrs))])
    (call_read,) = trace.calls
    blocks = call_read.response.blocks
    assert [(b.kind, b.text) for b in blocks if b.kind == "text"] == [
        ("text", "I'll read the file.")
    ]
    assert [(b.kind, b.tool_id) for b in blocks if b.kind == "tool_use"] == [
        ("tool_use", "read_file__1")
    ]
    assert call_read.stop_reason == "tool_use"


def test_a_log_export_alone_reads_its_operation_details_records():
    """OTLP logs: the response's operation-details record is a call; the request's twin
    (input only) and other records are ignored, not errors."""

    def record(name: str, attrs: dict) -> dict:
        return {
            "timeUnixNano": str(T0),
            "attributes": attributes({"event.name": name, "session.id": "s-1", **attrs}),
        }

    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}])
    output = [{"role": "assistant", "parts": [{"type": "text", "content": "Hello"}]}]
    details = "gen_ai.client.inference.operation.details"
    records = [
        record("gemini_cli.api_request", {"model": "gemini-2.5-pro"}),
        record(details, {"gen_ai.input.messages": messages}),
        record(
            details,
            {
                "gen_ai.input.messages": messages,
                "gen_ai.output.messages": json.dumps(output),
                "gen_ai.response.finish_reasons": "stop",
                "gen_ai.usage.input_tokens": 7,
                "gen_ai.usage.output_tokens": 2,
            },
        ),
    ]
    line = orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]})
    trace = analyze_bytes(line + b"\n", filename="logs.jsonl")
    assert trace.format == "otel-genai"
    assert not trace.line_errors
    (call,) = trace.calls
    assert (call.stop_reason, call.usage.input_tokens) == ("end_turn", 7)
