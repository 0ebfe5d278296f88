"""Gemini CLI's telemetry (issue 23) through the receiver: traces, logs and metrics.

No Gemini CLI runs here; its telemetry is rebuilt following its source
(google-gemini/gemini-cli): `runInDevTraceSpan` (packages/core/src/telemetry/trace.ts)
starts each span as the active span of whatever context is current, which at the top
of a turn is none, so every `llm_call` and `tool_call` span is a trace of its own,
linked only by `gen_ai.conversation.id` (the session id). `llm_call`
(core/loggingContentGenerator.ts) keeps the request's Gemini `contents` in
`gen_ai.input.messages`, the candidate's content (or, streamed, each chunk's) in
`gen_ai.output.messages`, and the usage; `tool_call` (scheduler/tool-executor.ts) keeps
`gen_ai.tool.call_id`, the `ToolCallRequestInfo` and the completed call. The function
call ids are the CLI's own (`name__name_<ms>_<n>`, core/turn.ts writes them back into the
history). Its log records (telemetry/types.ts) are `gemini_cli.api_request` /
`api_response` and their semantic twins `gen_ai.client.inference.operation.details`,
logged inside the `llm_call` span; `session.id` names the session. The real
OpenTelemetry SDK sends them with its OTLP/HTTP exporters, which must report success.
"""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.json.http._log_exporter import (
    OTLPLogExporter as JsonLogExporter,
)
from opentelemetry.exporter.otlp.json.http.metric_exporter import (
    OTLPMetricExporter as JsonMetricExporter,
)
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import LogRecordExportResult, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult

pytestmark = pytest.mark.corpus

RESOURCE = Resource.create({"service.name": "gemini-cli", "service.version": "0.9.0"})
CALL_ID = "read_file__read_file_1764590000000_0"


class Checked:
    """A real OTLP exporter, keeping the result of each export it makes."""

    def __init__(self, exporter) -> None:
        self.exporter = exporter
        self.results: list = []

    def export(self, batch):
        result = self.exporter.export(batch)
        self.results.append(result)
        return result

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


def common(session: str, operation: str) -> dict:
    """What `runInDevTraceSpan` sets on every span."""
    return {
        "gen_ai.operation.name": operation,
        "gen_ai.agent.name": "gemini-cli",
        "gen_ai.agent.description": "Gemini CLI is an open-source AI agent …",
        "gen_ai.conversation.id": session,
    }


def gemini_cli_session(tracer, logger, session: str) -> None:
    """One turn with a tool: llm_call (streamed) → tool_call → llm_call, each a trace."""
    user = {"role": "user", "parts": [{"text": "What does README.md say?"}]}
    call = {"functionCall": {"id": CALL_ID, "name": "read_file", "args": {"path": "README.md"}}}
    answer = {
        "functionResponse": {
            "id": CALL_ID,
            "name": "read_file",
            "response": {"output": "# Loop Inspector\nSee what your agent did."},
        }
    }
    system = json.dumps({"parts": [{"text": "You are Gemini CLI, an interactive agent."}]})
    tools = json.dumps([{"functionDeclarations": [{"name": "read_file"}]}])
    request = {
        "gen_ai.request.model": "gemini-2.5-pro",
        "gen_ai.prompt.name": f"{session}########1",
        "gen_ai.system_instructions": system,
        "gen_ai.tool.definitions": tools,
    }
    with tracer.start_as_current_span("llm_call", context=Context()) as span:
        time.sleep(0.01)
        chunks = [
            {"role": "model", "parts": [{"text": "I'll read "}]},
            {"role": "model", "parts": [{"text": "the file."}, call]},
            None,
        ]
        span.set_attributes(
            {
                **request,
                **common(session, "llm_call"),
                "gen_ai.input.messages": json.dumps([user]),
                "gen_ai.output.messages": json.dumps(chunks),
                "gen_ai.usage.input_tokens": 1200,
                "gen_ai.usage.output_tokens": 30,
            }
        )
    with tracer.start_as_current_span("tool_call", context=Context()) as span:
        time.sleep(0.02)
        info = {
            "callId": CALL_ID,
            "name": "read_file",
            "args": {"path": "README.md"},
            "isClientInitiated": False,
            "prompt_id": f"{session}########1",
        }
        completed = {
            "status": "success",
            "request": info,
            "response": {"callId": CALL_ID, "responseParts": [answer], "resultDisplay": ""},
            "durationMs": 20,
        }
        span.set_attributes(
            {
                **common(session, "tool_call"),
                "gen_ai.tool.name": "read_file",
                "gen_ai.tool.call_id": CALL_ID,
                "gen_ai.tool.description": "Reads a file.",
                "gen_ai.input.messages": json.dumps(info),
                "gen_ai.output.messages": json.dumps(completed),
            }
        )
    contents = [user, {"role": "model", "parts": [{"text": "I'll read the file."}, call]}]
    contents.append({"role": "user", "parts": [answer]})
    final = {"role": "model", "parts": [{"text": "It introduces Loop Inspector."}]}
    with tracer.start_as_current_span("llm_call", context=Context()) as span:
        if logger is not None:
            log_call(logger, session, contents, final)
        span.set_attributes(
            {
                **request,
                **common(session, "llm_call"),
                "gen_ai.input.messages": json.dumps(contents),
                "gen_ai.output.messages": json.dumps(final),
                "gen_ai.usage.input_tokens": 1300,
                "gen_ai.usage.output_tokens": 9,
            }
        )


def semconv(content: dict) -> dict:
    """`toChatMessage` (telemetry/semantic.ts): a Gemini content as semconv parts."""
    parts = []
    for part in content["parts"]:
        if "text" in part:
            parts.append({"type": "text", "content": part["text"]})
        elif "functionCall" in part:
            fc = part["functionCall"]
            parts.append(
                {
                    "type": "tool_call",
                    "name": fc["name"],
                    "id": fc["id"],
                    "arguments": json.dumps(fc["args"]),
                }
            )
        else:
            fr = part["functionResponse"]
            parts.append({"type": "tool_call_response", "id": fr["id"], "response": fr["response"]})
    return {"role": "assistant" if content["role"] == "model" else "user", "parts": parts}


def log_call(logger, session: str, contents: list, final: dict) -> None:
    """The records `logApiRequest` and `logApiResponse` (telemetry/loggers.ts) emit."""
    base = {"session.id": session, "installation.id": str(uuid.uuid4()), "interactive": True}
    inputs = json.dumps([semconv(c) for c in contents])
    logger.emit(
        event_name="gemini_cli.api_request",
        body="API request to gemini-2.5-pro.",
        attributes={**base, "event.name": "gemini_cli.api_request", "model": "gemini-2.5-pro"},
    )
    logger.emit(
        body="GenAI operation request details from gemini-2.5-pro.",
        attributes={
            **base,
            "event.name": "gen_ai.client.inference.operation.details",
            "gen_ai.operation.name": "generate_content",
            "gen_ai.request.model": "gemini-2.5-pro",
            "gen_ai.input.messages": inputs,
        },
    )
    logger.emit(
        body="API response from gemini-2.5-pro. Status: 200. Duration: 812ms.",
        attributes={
            **base,
            "event.name": "gemini_cli.api_response",
            "model": "gemini-2.5-pro",
            "duration_ms": 812,
            "input_token_count": 1300,
            "output_token_count": 9,
            "finish_reasons": ["stop"],
        },
    )
    logger.emit(
        body="GenAI operation details from gemini-2.5-pro. Status: 200. Duration: 812ms.",
        attributes={
            **base,
            "event.name": "gen_ai.client.inference.operation.details",
            "gen_ai.operation.name": "generate_content",
            "gen_ai.request.model": "gemini-2.5-pro",
            "gen_ai.response.model": "gemini-2.5-pro",
            "gen_ai.response.id": "resp-2",
            "gen_ai.response.finish_reasons": ["stop"],
            "gen_ai.input.messages": inputs,
            "gen_ai.output.messages": json.dumps([{**semconv(final), "finish_reason": "stop"}]),
            "gen_ai.usage.input_tokens": 1300,
            "gen_ai.usage.output_tokens": 9,
        },
    )


def check_session(server, session: str) -> dict:
    stored = server.trace_id(f"otlp:conversation:{session}")
    server.wait_report(stored, calls=2)
    time.sleep(1.5)  # the report follows each export within ~1 s: no third call comes
    report = server.report(stored)
    calls = report["calls"]
    assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn"]
    assert [c["input_tokens"] for c in calls] == [1200, 1300]
    (run,) = report["tool_runs"]
    assert (run["id"], run["name"], run["status"]) == (CALL_ID, "read_file", "paired")
    assert run["duration_s"] is not None and run["duration_s"] >= 0.02  # the tool_call span
    assert (
        len(
            server.rows(
                "SELECT id FROM traces_trace WHERE capture_key LIKE 'otlp:%' AND capture_key LIKE ?",
                f"%{session}%",
            )
        )
        == 1
    )
    return report


def test_gemini_cli_spans_are_one_trace_per_session(inspector_server):
    session = str(uuid.uuid4())
    spans = Checked(OTLPSpanExporter(endpoint=f"{inspector_server.base}/v1/traces"))
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    gemini_cli_session(provider.get_tracer("gemini-cli", "v1"), None, session)
    provider.force_flush()
    assert spans.results == [SpanExportResult.SUCCESS] * 3
    check_session(inspector_server, session)


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
def test_gemini_cli_logs_and_metrics_are_accepted(inspector_server, encoding):
    """Spans, logs and metrics as Gemini CLI exports them: every exporter reports
    success; the operation-details record logged inside the second `llm_call` is that
    call (one call, not two), the other records are kept and ignored."""
    session = str(uuid.uuid4())
    log_exporter = OTLPLogExporter if encoding == "protobuf" else JsonLogExporter
    metric_exporter = OTLPMetricExporter if encoding == "protobuf" else JsonMetricExporter
    spans = Checked(OTLPSpanExporter(endpoint=f"{inspector_server.base}/v1/traces"))
    records = Checked(log_exporter(endpoint=f"{inspector_server.base}/v1/logs"))
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=RESOURCE)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(records))
    gemini_cli_session(
        tracer_provider.get_tracer("gemini-cli", "v1"),
        logger_provider.get_logger("gemini-cli"),
        session,
    )
    tracer_provider.force_flush()
    logger_provider.force_flush()
    assert records.results == [LogRecordExportResult.SUCCESS] * 4
    assert spans.results == [SpanExportResult.SUCCESS] * 3

    reader = InMemoryMetricReader()
    meters = MeterProvider(resource=RESOURCE, metric_readers=[reader])
    counter = meters.get_meter("gemini-cli").create_counter("gemini_cli.token.usage")
    counter.add(1300, {"model": "gemini-2.5-pro", "type": "input", "session.id": session})
    exporter = metric_exporter(endpoint=f"{inspector_server.base}/v1/metrics")
    assert exporter.export(reader.get_metrics_data()) == MetricExportResult.SUCCESS

    check_session(inspector_server, session)


def test_logs_of_no_genai_trace_are_not_stored(inspector_server):
    """An app's ordinary log lines: accepted, not stored, and the answer says so."""
    records = Checked(OTLPLogExporter(endpoint=f"{inspector_server.base}/v1/logs"))
    provider = LoggerProvider(resource=Resource.create({"service.name": "web-app"}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(records))
    tracer = TracerProvider().get_tracer("web")
    with tracer.start_as_current_span("GET /") as span:
        provider.get_logger("web").emit(body="GET / 200", attributes={"http.status": 200})
        trace_id = format(span.get_span_context().trace_id, "032x")
    provider.get_logger("web").emit(body="no trace at all")
    provider.force_flush()
    assert records.results == [LogRecordExportResult.SUCCESS] * 2
    assert not inspector_server.rows(
        "SELECT id FROM traces_trace WHERE capture_key = ?", f"otlp:{trace_id}"
    )


@pytest.mark.parametrize("signal", ["logs", "metrics"])
def test_logs_and_metrics_bad_input_is_a_clear_4xx(inspector_server, signal):
    """The same checks and limits as /v1/traces."""
    url = f"{inspector_server.base}/v1/{signal}"

    def post(body: bytes, content_type: str):
        return httpx.post(url, content=body, headers={"Content-Type": content_type}, timeout=60)

    reply = post(b"\xff\xff\xff\xff not protobuf", "application/x-protobuf")
    assert reply.status_code == 400
    assert "not an OTLP protobuf export" in reply.json()["error"]
    assert post(b"<logs/>", "application/xml").status_code == 415
    key = "resourceLogs" if signal == "logs" else "resourceMetrics"
    reply = post(json.dumps({key: 7}).encode(), "application/json")
    assert reply.status_code == 400
    assert key in reply.json()["error"]
    reply = post(b"x" * (50 * 1024 * 1024), "application/x-protobuf")
    assert reply.status_code == 413
    assert httpx.get(url, timeout=60).status_code == 405
