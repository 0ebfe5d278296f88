"""Two span layers for one call (issue 23): the Anthropic SDK (2.15) emits its own
`anthropic.messages.create` span, without content, as the child of OpenInference's
`messages.create` span, which has it. The real SDK, OpenInference's instrumentation and
the OpenTelemetry SDK's OTLP/HTTP exporter send both to the receiver, the SDK calling the
fake Anthropic upstream directly; exported one by one (SimpleSpanProcessor: the child
first) or in a batch, the trace has one call per call, its tool runs and stop reasons."""

from __future__ import annotations

import time

import anthropic
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.capture.scenario import SECRET

pytestmark = pytest.mark.corpus


def two_calls(provider: TracerProvider, base: str) -> str:
    """A tool loop of two model calls under an agent span; the trace id."""
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    instrumentor = AnthropicInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = anthropic.Anthropic(
            api_key=SECRET,
            base_url=base,
            max_retries=0,
            open_telemetry={"tracer_provider": provider},
        )
        tracer = provider.get_tracer("agent")
        with tracer.start_as_current_span("agent") as root:
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
    finally:
        instrumentor.uninstrument()
    provider.force_flush()
    return trace_id


def test_the_sdk_really_emits_a_content_less_child_span(upstream):
    """The premise: two chat spans per call, the SDK's inside OpenInference's."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    two_calls(provider, upstream.base)
    spans = memory.get_finished_spans()
    sdk = [s for s in spans if s.name == "anthropic.messages.create"]
    outer = [s for s in spans if s.name == "messages.create"]
    assert len(sdk) == len(outer) == 2
    assert {s.parent.span_id for s in sdk} == {s.context.span_id for s in outer}
    assert not any(k.startswith("llm.") for s in sdk for k in s.attributes)
    assert spans.index(sdk[0]) < spans.index(outer[0])  # exported child first


@pytest.mark.parametrize("processor", [SimpleSpanProcessor, BatchSpanProcessor])
def test_one_call_per_call_whatever_the_layers(inspector_server, upstream, processor):
    provider = TracerProvider(resource=Resource.create({"service.name": "layered-agent"}))
    provider.add_span_processor(
        processor(OTLPSpanExporter(endpoint=f"{inspector_server.base}/v1/traces"))
    )
    trace_id = two_calls(provider, upstream.base)
    stored = inspector_server.trace_id(f"otlp:{trace_id}")
    inspector_server.wait_report(stored, calls=2)
    time.sleep(1.5)  # the report follows each export within ~1 s: no third call comes
    report = inspector_server.report(stored)
    calls = report["calls"]
    assert len(calls) == 2, [c.get("extra") for c in calls]
    assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn"]
    assert all(c["input_tokens"] and c["output_tokens"] for c in calls)
    runs = sorted((r["name"], r["status"]) for r in report["tool_runs"])
    assert runs == [("get_time", "paired"), ("get_weather", "paired")]
    rules = {f["rule"] for f in report["findings"]}
    assert "dangling-tool-call" not in rules, report["findings"]
