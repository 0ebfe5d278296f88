"""The OTLP/HTTP receiver with the real OpenTelemetry SDK and its OTLP/HTTP exporters
(protobuf and JSON), an OpenInference instrumentation of the real anthropic SDK, and bad
input; each trace id becomes a live trace read by the otel-genai adapter."""

from __future__ import annotations

import gzip
import json
import time

import anthropic
import httpx
import pytest
from opentelemetry.exporter.otlp.json.http.trace_exporter import (
    OTLPSpanExporter as JsonSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as ProtoSpanExporter,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.capture.conftest import capture_server
from tests.capture.scenario import SECRET

pytestmark = pytest.mark.corpus


def provider_for(exporter) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def message_parts(role: str, *parts: dict) -> dict:
    return {"role": role, "parts": list(parts)}


def run_genai_loop(provider: TracerProvider) -> str:
    """A tool-using loop as GenAI semantic-convention spans: chat → execute_tool → chat."""
    tracer = provider.get_tracer("agent")
    user = message_parts("user", {"type": "text", "content": "Weather in Paris?"})
    call = {
        "type": "tool_call",
        "id": "call_1234",
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    }
    asked = message_parts("assistant", call)
    answered = message_parts(
        "tool", {"type": "tool_call_response", "id": "call_1234", "response": "rainy, 57°F"}
    )
    final = message_parts("assistant", {"type": "text", "content": "It is rainy in Paris."})
    with tracer.start_as_current_span("invoke_agent weather") as root:
        with tracer.start_as_current_span("chat gpt-4o") as span:
            span.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.input.messages": json.dumps([user]),
                    "gen_ai.output.messages": json.dumps([{**asked, "finish_reason": "tool_call"}]),
                    "gen_ai.usage.input_tokens": 97,
                    "gen_ai.usage.output_tokens": 20,
                    "gen_ai.response.finish_reasons": ["tool_calls"],
                }
            )
        with tracer.start_as_current_span("execute_tool get_weather") as span:
            span.set_attributes(
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "get_weather",
                    "gen_ai.tool.call.id": "call_1234",
                }
            )
            time.sleep(0.01)
        with tracer.start_as_current_span("chat gpt-4o") as span:
            span.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.input.messages": json.dumps([user, asked, answered]),
                    "gen_ai.output.messages": json.dumps([{**final, "finish_reason": "stop"}]),
                    "gen_ai.usage.input_tokens": 130,
                    "gen_ai.usage.output_tokens": 12,
                    "gen_ai.response.finish_reasons": ["stop"],
                }
            )
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.force_flush()
    return trace_id


def check_loop(server, trace_id: str) -> dict:
    stored = server.trace_id(f"otlp:{trace_id}")
    report = server.wait_report(stored, calls=2)
    assert report["format"] == "otel-genai"
    assert [c["stop_reason"] for c in report["calls"]] == ["tool_use", "end_turn"]
    assert [c["input_tokens"] for c in report["calls"]] == [97, 130]
    (run,) = report["tool_runs"]
    assert (run["id"], run["name"], run["status"]) == ("call_1234", "get_weather", "paired")
    assert run["duration_s"] is not None  # timed by the execute_tool span
    return report


def test_the_real_sdk_exporting_protobuf_gzip(inspector_server):
    exporter = ProtoSpanExporter(
        endpoint=f"{inspector_server.base}/v1/traces", compression=Compression.Gzip
    )
    check_loop(inspector_server, run_genai_loop(provider_for(exporter)))


def test_the_real_sdk_exporting_json(inspector_server):
    exporter = JsonSpanExporter(endpoint=f"{inspector_server.base}/api/otlp/v1/traces")
    check_loop(inspector_server, run_genai_loop(provider_for(exporter)))


def test_openinference_on_the_anthropic_sdk_matches_the_proxy_recording(inspector_server):
    """The same tool loop, recorded twice: by the proxy, and by OpenInference's anthropic
    instrumentation exporting to the receiver. Both traces show the same calls, tool runs
    and tokens."""
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    provider = provider_for(ProtoSpanExporter(endpoint=f"{inspector_server.base}/v1/traces"))
    instrumentor = AnthropicInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = anthropic.Anthropic(
            api_key=SECRET,
            base_url=f"{inspector_server.base}/proxy/s/openinference/anthropic",
            max_retries=0,
        )
        tracer = provider.get_tracer("agent")
        with tracer.start_as_current_span("agent") as root:
            root.set_attribute("openinference.span.kind", "AGENT")
            messages: list[dict] = [{"role": "user", "content": "Weather and time in New York?"}]
            first = client.messages.create(
                model="claude-sonnet-4-6", max_tokens=1024, messages=messages
            )
            results = [
                {"type": "tool_result", "tool_use_id": b.id, "content": "ok"}
                for b in first.content
                if b.type == "tool_use"
            ]
            messages += [
                {"role": "assistant", "content": [b.model_dump() for b in first.content]},
                {"role": "user", "content": results},
            ]
            client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, messages=messages)
            trace_id = format(root.get_span_context().trace_id, "032x")
        provider.force_flush()
    finally:
        instrumentor.uninstrument()

    proxied = inspector_server.wait_report(
        inspector_server.trace_id("proxy:anthropic-messages:openinference"), calls=2
    )
    spans = inspector_server.wait_report(inspector_server.trace_id(f"otlp:{trace_id}"), calls=2)

    def shape(report: dict) -> tuple:
        calls = [(c["stop_reason"], c["input_tokens"], c["output_tokens"]) for c in report["calls"]]
        runs = sorted((r["id"], r["name"], r["status"]) for r in report["tool_runs"])
        return calls, runs

    assert shape(spans) == shape(proxied)
    assert len(shape(proxied)[1]) == 2


def post(server, body: bytes, content_type: str, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{server.base}/v1/traces",
        content=body,
        headers={"Content-Type": content_type, **headers},
        timeout=60,
    )


def test_bad_input_is_a_clear_4xx(inspector_server):
    reply = post(inspector_server, b"\xff\xff\xff\xff not protobuf", "application/x-protobuf")
    assert reply.status_code == 400
    assert "not an OTLP protobuf export" in reply.json()["error"]
    reply = post(inspector_server, b"<spans/>", "application/xml")
    assert reply.status_code == 415
    assert "application/x-protobuf" in reply.json()["error"]
    reply = post(inspector_server, b"{not json", "application/json")
    assert reply.status_code == 400
    reply = post(inspector_server, b"x" * (50 * 1024 * 1024), "application/x-protobuf")
    assert reply.status_code == 413
    assert "OTLP_MAX_BYTES" in reply.json()["error"]
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024))
    reply = post(inspector_server, bomb, "application/x-protobuf", **{"Content-Encoding": "gzip"})
    assert reply.status_code == 413
    assert "decompressed" in reply.json()["error"]
    reply = post(inspector_server, b"{}", "application/json", **{"Content-Encoding": "br"})
    assert reply.status_code == 415


def otlp_json(trace_id: str, *spans: dict) -> bytes:
    return json.dumps(
        {
            "resourceSpans": [
                {"scopeSpans": [{"spans": [{"traceId": trace_id, **s} for s in spans]}]}
            ]
        }
    ).encode()


def chat_span(span_id: str, start: int, question: str) -> dict:
    return {
        "spanId": span_id,
        "name": "chat",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1_000_000),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}},
            {
                "key": "gen_ai.input.messages",
                "value": {
                    "stringValue": json.dumps(
                        [message_parts("user", {"type": "text", "content": question})]
                    )
                },
            },
        ],
    }


def test_partial_success_names_rejected_and_ignored_spans(inspector_server):
    good = "0af7651916cd43dd8448eb211c80319c"
    body = json.dumps(
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {"traceId": "nothex", "spanId": "00f067aa0ba902b7", "name": "bad"},
                                {
                                    **chat_span(
                                        "00f067aa0ba902b8", 1_700_000_000_000_000_000, "hi"
                                    ),
                                    "traceId": good,
                                },
                                {
                                    "traceId": "1" * 32,
                                    "spanId": "00f067aa0ba902b9",
                                    "name": "GET /",
                                },
                            ]
                        }
                    ]
                }
            ]
        }
    ).encode()
    reply = post(inspector_server, body, "application/json")
    assert reply.status_code == 200
    partial = reply.json()["partialSuccess"]
    assert partial["rejectedSpans"] == 1
    assert "traceId" in partial["errorMessage"]
    assert "no GenAI span" in partial["errorMessage"]
    inspector_server.wait_for_exports()  # answered once queued: stored by the queue
    inspector_server.trace_id(f"otlp:{good}")
    assert not inspector_server.rows(
        "SELECT id FROM traces_trace WHERE capture_key = ?", "otlp:" + "1" * 32
    )


def test_a_protobuf_request_gets_a_protobuf_answer(inspector_server):
    reply = post(inspector_server, b"", "application/x-protobuf")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/x-protobuf"
    answer = ExportTraceServiceResponse.FromString(reply.content)
    assert not answer.HasField("partial_success")


def test_spans_arriving_late_and_out_of_order_join_their_trace(inspector_server):
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    base = 1_700_000_000_000_000_000
    post(
        inspector_server,
        otlp_json(trace_id, chat_span("b7ad6b7169203331", base + 2_000_000_000, "second")),
        "application/json",
    )
    post(
        inspector_server,
        otlp_json(trace_id, chat_span("b7ad6b7169203330", base, "first")),
        "application/json",
    )
    inspector_server.wait_for_exports()
    stored = inspector_server.trace_id(f"otlp:{trace_id}")
    report = inspector_server.wait_report(stored, calls=2)
    assert (
        len(
            inspector_server.rows(
                "SELECT id FROM traces_trace WHERE capture_key = ?", f"otlp:{trace_id}"
            )
        )
        == 1
    )
    assert len(report["calls"]) == 2


TRACE_26 = "26" * 16


@pytest.mark.parametrize(
    "export",
    [
        {"resourceSpans": [{"scopeSpans": 7}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": 7}]}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": TRACE_26, "attributes": 7}]}]}]},
        {"resourceSpans": [{"resource": {"attributes": 7}, "scopeSpans": [{"spans": []}]}]},
    ],
    ids=["scopeSpans", "spans", "span-attributes", "resource-attributes"],
)
def test_a_number_where_a_list_belongs_is_an_answer_not_a_500(inspector_server, export):
    """Issue 26: each of these was a 500 on both databases."""
    reply = post(inspector_server, json.dumps(export).encode(), "application/json")
    assert reply.status_code < 500, reply.text


def test_a_large_export_is_stored_in_batches_not_one_transaction(tmp_path_factory):
    """Issue 26: a 10,000-trace export held SQLite's write lock for the whole request (a
    live create waited 16 s). Stored OTLP_BATCH_TRACES to a transaction, other writers get
    in between: polled while the queued export is stored, the count of its traces is seen
    between none and all, which one transaction would never show. Issue 25: the export is
    answered before it is stored, and its job's count of stored traces moves on with
    each batch."""
    traces = 300
    spans = [
        {
            **chat_span(f"{n + 1:016x}", 1_700_000_000_000_000_000 + n, f"q{n}"),
            "traceId": f"{n + 1:032x}",
        }
        for n in range(traces)
    ]
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()
    with capture_server(
        tmp_path_factory.mktemp("otlp-batches"), INSPECTOR_OTLP_BATCH_TRACES="10"
    ) as server:
        reply = post(server, body, "application/json")
        assert reply.status_code == 200, reply.text
        seen = set()
        stored = set()
        while server.exports_pending():
            ((count,),) = server.rows(
                "SELECT count(*) FROM traces_trace WHERE capture_key LIKE 'otlp:%'"
            )
            seen.add(count)
            stored.update(r for (r,) in server.rows("SELECT records_parsed FROM traces_job"))
            time.sleep(0.01)
        server.wait_for_exports()
        ((final,),) = server.rows(
            "SELECT count(*) FROM traces_trace WHERE capture_key LIKE 'otlp:%'"
        )
        assert final == traces
        assert any(0 < count < traces for count in seen), sorted(seen)
        assert all(count % 10 == 0 for count in stored), sorted(stored)
        assert server.rows("SELECT state, records_parsed FROM traces_job") == [("done", traces)]
