"""OpenTelemetry GenAI spans: each chat span is one model call; tool spans time tools.

Shapes read:
- OTLP JSON exports `{resourceSpans: [{resource, scopeSpans: [{scope, spans}]}]}`, as a
  whole file or one export per line (the collector's file exporter), with typed
  attribute values `[{key, value: {stringValue | intValue …}}]`;
- arrays (or lines) of span objects: OTLP spans, OTel JS `ReadableSpan` dumps
  (`spanContext`, `startTime: [sec, nanos]`, flat `attributes`) and Python
  `span.to_json()` (`context`, ISO `start_time`);
- a bare attribute map, the way instrumentation test fixtures keep one span.
`dialects.otel_genai` reads the attribute vocabularies (GenAI semantic conventions,
their deprecated names, OpenInference, Vercel AI SDK). Embedding spans, agent spans and
wrapper spans (Vercel's `ai.generateText` around the provider call
`ai.generateText.doGenerate`) are not model calls of the loop and are skipped.
`execute_tool` spans become tool timings. Spans of one trace id form one loop.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ...coerce import parse_arguments
from ...model import Exchange, LineError, Message, ToolTiming
from ..dialects import otel_genai as otel
from ..records import Record
from ..timeparse import to_epoch_seconds
from .base import Adapter, AdapterEvent, Detection
from .registry import register

SpanRole = Literal["chat", "tool", "skip"]
CHAT_OPERATIONS = {"chat", "text_completion", "generate_content", "completion"}
EMBEDDING_OPERATIONS = {"embeddings", "embedding"}
TOOL_OPERATIONS = {"execute_tool"}
CONTENT_PREFIXES = ("gen_ai.prompt.", "gen_ai.completion.", "llm.input_messages.")
CONTENT_PREFIXES += ("llm.output_messages.", "llm.tools.")
CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.prompt",
    "gen_ai.completion",
    "ai.prompt.messages",
    "ai.prompt.tools",
    "ai.response.text",
    "ai.response.toolCalls",
    "ai.response.object",
    "ai.response.reasoning",
    "input.value",
    "output.value",
}
"""Attributes read into messages, system or tools: not repeated in `extra`."""
CONTENT_EVENTS = {
    "gen_ai.content.prompt",
    "gen_ai.content.completion",
    "gen_ai.client.inference.operation.details",
}
"""Span events that carry the prompt and completion instead of span attributes."""
SIGNATURE_PREFIXES = ("gen_ai.", "llm.", "openinference.")
TOOL_ARGUMENT_KEYS = ("gen_ai.tool.call.arguments", "ai.toolCall.args", "input.value", "input")
TOOL_RESULT_KEYS = ("gen_ai.tool.call.result", "ai.toolCall.result", "output.value", "output")
"""Where a tool-execution span keeps what the tool was given and what it returned."""
ERROR_CODES = {2, "2", "STATUS_CODE_ERROR", "ERROR", "error"}


@dataclass(frozen=True, slots=True)
class Span:
    """One span, whatever shape it was serialised in."""

    index: int
    name: str | None
    trace_id: str | None
    span_id: str | None
    parent_id: str | None
    started_at: float | None
    ended_at: float | None
    attrs: dict[str, Any]
    error: str | None
    service: str | None = None


@register
class OtelGenAIAdapter(Adapter):
    name = "otel-genai"
    label = "OpenTelemetry GenAI spans"
    where = (
        "Exported by an OpenTelemetry SDK or collector (OTLP JSON, the file exporter, or a "
        "JSON dump of span objects) from GenAI, OpenInference or Vercel AI SDK tracing."
    )
    normalize = staticmethod(otel.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._held: list[tuple[str, ToolTiming]] = []
        """Failed-tool timings waiting for the call that carries the tool's result."""
        self._latest_call: dict[str, float] = {}
        """Start of the latest call emitted, per trace id."""

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        for value in values:
            claim = _recognise(value)
            if claim is not None:
                return claim
        return None

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        spans, problems = extract_spans(record.value)
        for problem in problems:
            yield LineError(record.line, problem)
        calls: list[tuple[Span, Exchange]] = []
        timings: list[tuple[Span, ToolTiming]] = []
        for span in spans:
            try:
                role = span_role(span)
                if role == "chat":
                    calls.append((span, self._exchange(record.line, span)))
                elif role == "tool":
                    timing = _timing(record.line, span)
                    if timing is not None:
                        timings.append((span, timing))
            except Exception as exc:  # one odd span must not sink the rest of the export
                label = span.name or f"#{span.index + 1}"
                yield LineError(record.line, f"span {label} could not be read: {exc}")
        calls = _innermost(calls)
        for span, exchange in sorted(calls, key=lambda pair: _chronological(pair[0])):
            yield exchange
            if span.trace_id is not None and span.started_at is not None:
                latest = self._latest_call.get(span.trace_id, span.started_at)
                self._latest_call[span.trace_id] = max(latest, span.started_at)
        for span, timing in sorted(timings, key=lambda pair: _chronological(pair[0])):
            if timing.is_error and span.trace_id is not None:
                self._held.append((span.trace_id, timing))
            else:
                yield timing
        yield from self._release()

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._release(everything=True)

    def _release(self, everything: bool = False) -> Iterator[AdapterEvent]:
        """Emit a failed tool's timing once a later call of its trace was emitted.

        The builder takes a run's error flag from its result when the result is paired,
        dropping one set earlier by a timing; waiting keeps the span's failure.
        """
        waiting: list[tuple[str, ToolTiming]] = []
        for trace_id, timing in self._held:
            latest = self._latest_call.get(trace_id)
            ended = timing.ended_at
            if everything or (latest is not None and (ended is None or latest >= ended)):
                yield timing
            else:
                waiting.append((trace_id, timing))
        self._held = waiting

    def _exchange(self, line: int, span: Span) -> Exchange:
        attrs = span.attrs
        messages = input_messages(attrs)
        outputs, output_finish = output_messages(attrs)
        response = _response(outputs)
        finish = _finish_reason(attrs, outputs, output_finish)
        has_tools = response is not None and bool(response.tool_uses)
        extra: dict[str, Any] = {"span": _span_ids(span)}
        if finish is not None:
            extra["finish_reason"] = finish
        if span.service:
            extra["service"] = span.service
        extra["attributes"] = {
            k: v
            for k, v in attrs.items()
            if k not in CONTENT_KEYS and not k.startswith(CONTENT_PREFIXES)
        }
        return Exchange(
            line=line,
            messages=messages,
            normalize=self.normalize,
            system=_system(attrs, messages),
            tools=tool_definitions(attrs),
            model=_model(attrs),
            response=response,
            response_raw=outputs or None,
            stop_reason=otel.stop_reason(finish, has_tools),
            usage=otel.usage_from(attrs),
            started_at=span.started_at,
            ended_at=span.ended_at,
            status="error" if span.error else "ok",
            error=span.error,
            request_recorded=bool(messages),
            extra=extra,
            loop_key=span.trace_id,
            loop_label=f"trace {span.trace_id}" if span.trace_id else None,
        )


# -- reading spans ------------------------------------------------------------------------
def extract_spans(value: Any) -> tuple[list[Span], list[str]]:
    """Every span in one record, and what could not be read."""
    if not isinstance(value, dict):
        return [], ["expected a JSON object: an OTLP export, a span or an attribute map"]
    if isinstance(value.get("resourceSpans"), list):
        return _from_resources(value["resourceSpans"])
    if isinstance(value.get("scopeSpans"), list) or isinstance(
        value.get("instrumentationLibrarySpans"), list
    ):
        return _from_resources([value])
    if isinstance(value.get("spans"), list):
        return _from_list(value["spans"], None)
    if _is_span(value):
        return [read_span(value, 0, None)], []
    if _is_attribute_map(value):
        return [_attribute_span(value)], []
    return [], ["not an OpenTelemetry span: no resourceSpans, span context or GenAI attributes"]


def _from_resources(resources: list[Any]) -> tuple[list[Span], list[str]]:
    spans: list[Span] = []
    problems: list[str] = []
    for resource_spans in resources:
        if not isinstance(resource_spans, dict):
            problems.append("a resourceSpans entry is not an object")
            continue
        resource = resource_spans.get("resource")
        resource_attrs = (
            otel.attributes(resource.get("attributes")) if isinstance(resource, dict) else {}
        )
        service = resource_attrs.get("service.name")
        scopes = resource_spans.get("scopeSpans") or resource_spans.get(
            "instrumentationLibrarySpans"
        )
        for scope in scopes if isinstance(scopes, list) else []:
            raw_spans = scope.get("spans") if isinstance(scope, dict) else None
            found, trouble = _from_list(raw_spans or [], service, start=len(spans))
            spans.extend(found)
            problems.extend(trouble)
    return spans, problems


def _from_list(raw_spans: list[Any], service: Any, start: int = 0) -> tuple[list[Span], list[str]]:
    spans: list[Span] = []
    problems: list[str] = []
    for offset, raw in enumerate(raw_spans):
        if isinstance(raw, dict):
            spans.append(read_span(raw, start + offset, service))
        else:
            problems.append(f"span #{start + offset + 1} is not a JSON object")
    return spans, problems


def read_span(raw: dict[str, Any], index: int, service: Any) -> Span:
    """A span from OTLP JSON, an OTel JS ReadableSpan or a Python `to_json()` dump."""
    context = raw.get("spanContext") or raw.get("context")
    context = context if isinstance(context, dict) else {}
    parent = raw.get("parentSpanContext")
    parent_id = raw.get("parentSpanId") or raw.get("parent_id") or raw.get("parentId")
    if parent_id is None and isinstance(parent, dict):
        parent_id = parent.get("spanId")
    attrs = otel.attributes(raw.get("attributes"))
    for event in raw.get("events") if isinstance(raw.get("events"), list) else []:
        if isinstance(event, dict) and event.get("name") in CONTENT_EVENTS:
            for key, value in otel.attributes(event.get("attributes")).items():
                attrs.setdefault(key, value)
    return Span(
        index=index,
        name=raw.get("name") if isinstance(raw.get("name"), str) else None,
        trace_id=_id(raw.get("traceId") or context.get("traceId") or context.get("trace_id")),
        span_id=_id(raw.get("spanId") or context.get("spanId") or context.get("span_id")),
        parent_id=_id(parent_id),
        started_at=_time(raw, "startTimeUnixNano", "startTime", "start_time"),
        ended_at=_time(raw, "endTimeUnixNano", "endTime", "end_time"),
        attrs=attrs,
        error=_status_error(raw.get("status"), attrs),
        service=service if isinstance(service, str) else None,
    )


def _attribute_span(attrs: dict[str, Any]) -> Span:
    return Span(0, None, None, None, None, None, None, dict(attrs), _status_error(None, attrs))


def _is_span(value: dict[str, Any]) -> bool:
    has_identity = any(
        key in value for key in ("spanContext", "context", "traceId", "spanId", "startTimeUnixNano")
    )
    return has_identity and ("attributes" in value or "name" in value)


def _is_attribute_map(value: dict[str, Any]) -> bool:
    return any(
        key.startswith(SIGNATURE_PREFIXES) or key == "ai.operationId"
        for key in value
        if isinstance(key, str)
    )


def _time(raw: dict[str, Any], *keys: str) -> float | None:
    for key in keys:
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, list) and len(value) == 2:  # OTel JS HrTime [seconds, nanos]
            seconds, nanos = value
            if isinstance(seconds, (int, float)) and isinstance(nanos, (int, float)):
                return (float(seconds) + float(nanos) / 1e9) or None
            return None
        if isinstance(value, str) and value.isdigit():
            value = int(value)  # OTLP JSON writes 64-bit nanoseconds as strings
        return to_epoch_seconds(value)
    return None


def _status_error(status: Any, attrs: Mapping[str, Any]) -> str | None:
    """The failure text of a span whose status is ERROR (or that carries `error.type`)."""
    if isinstance(status, dict):
        code = status.get("code", status.get("status_code"))
        if code in ERROR_CODES:
            message = status.get("message") or status.get("description")
            return str(message or attrs.get("error.type") or "span status ERROR")
    if attrs.get("error.type"):
        return str(attrs["error.type"])
    return None


def _id(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


def _span_ids(span: Span) -> dict[str, Any]:
    ids = {
        "name": span.name,
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_id,
    }
    return {k: v for k, v in ids.items() if v is not None}


def _chronological(span: Span) -> tuple[bool, float, int]:
    return (span.started_at is None, span.started_at or 0.0, span.index)


# -- what a span is -----------------------------------------------------------------------
def span_role(span: Span) -> SpanRole:
    """chat (a model call of the loop), tool (a tool execution) or skip."""
    attrs = span.attrs
    operation = attrs.get("gen_ai.operation.name")
    kind = str(attrs.get("openinference.span.kind") or "").upper()
    vercel = attrs.get("ai.operationId")
    if operation in EMBEDDING_OPERATIONS or kind == "EMBEDDING":
        return "skip"
    if operation in TOOL_OPERATIONS or kind == "TOOL" or vercel == "ai.toolCall":
        return "tool"
    if isinstance(vercel, str):
        # The provider call is `ai.<fn>.doGenerate|doStream`; `ai.<fn>` wraps it (and
        # repeats its usage), `ai.embed*` are embeddings.
        is_call = vercel.endswith((".doGenerate", ".doStream")) and not vercel.startswith(
            "ai.embed"
        )
        return "chat" if is_call else "skip"
    if operation in CHAT_OPERATIONS or kind == "LLM":
        return "chat"
    if operation is not None or kind:
        return "skip"  # agents, chains, retrievers …: not a model call
    has_content = any(key.startswith(CONTENT_PREFIXES) or key in CONTENT_KEYS for key in attrs)
    if has_content or "gen_ai.request.model" in attrs or "llm.model_name" in attrs:
        return "chat"
    return "skip"


def _innermost(calls: list[tuple[Span, Exchange]]) -> list[tuple[Span, Exchange]]:
    """Drop a chat span whose child is a chat span too (a framework's LLM span around the
    provider instrumentation's span): the same model call, counted once."""
    parents = {span.parent_id for span, _ in calls if span.parent_id is not None}
    return [(span, exchange) for span, exchange in calls if span.span_id not in parents]


def _timing(line: int, span: Span) -> ToolTiming | None:
    attrs = span.attrs
    tool_id = otel.tool_id(
        otel.first(attrs, "gen_ai.tool.call.id", "tool_call.id", "tool.call_id", "ai.toolCall.id")
    )
    if tool_id is None:
        return None  # without an id the execution cannot be paired with any call
    name = otel.first(attrs, "gen_ai.tool.name", "tool.name", "ai.toolCall.name")
    arguments = otel.first(attrs, *TOOL_ARGUMENT_KEYS)
    result = otel.first(attrs, *TOOL_RESULT_KEYS)
    return ToolTiming(
        line,
        tool_id,
        name=name if isinstance(name, str) else None,
        started_at=span.started_at,
        ended_at=span.ended_at,
        is_error=True if span.error else None,
        result_text=None if result is None else otel.result_text(result),
        input=None if arguments is None else parse_arguments(arguments),
    )


# -- what a chat span says ----------------------------------------------------------------
def input_messages(attrs: Mapping[str, Any]) -> list[Any]:
    """The request's messages, from whichever vocabulary the span uses."""
    for key in ("gen_ai.input.messages", "gen_ai.prompt", "ai.prompt.messages"):
        value = otel.parse_json(attrs.get(key))
        if isinstance(value, list):
            return value
    for prefix in ("gen_ai.prompt", "llm.input_messages"):
        items = otel.unflatten(attrs, prefix)
        if items:
            return [_unwrap(item) for item in items]
    value = otel.parse_json(attrs.get("input.value"))
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return value["messages"]
    if isinstance(value, str) and value:
        return [{"role": "user", "content": value}]
    return []


def output_messages(attrs: Mapping[str, Any]) -> tuple[list[Any], Any]:
    """The response's messages, and a finish reason found beside them."""
    value = otel.parse_json(attrs.get("gen_ai.output.messages"))
    if isinstance(value, list):
        return value, None
    completion = otel.parse_json(attrs.get("gen_ai.completion"))
    if completion is not None:
        return _output_object(completion)
    for prefix in ("gen_ai.completion", "llm.output_messages"):
        items = otel.unflatten(attrs, prefix)
        if items:
            return [_unwrap(item) for item in items], None
    vercel = _vercel_response(attrs)
    if vercel is not None:
        return [vercel], None
    output = otel.parse_json(attrs.get("output.value"))
    if output is not None:
        return _output_object(output)
    return [], None


def _output_object(value: Any) -> tuple[list[Any], Any]:
    """An output written as one value: a chat completion, `{text, finish_reason}`, text."""
    if isinstance(value, list):
        return value, None
    if isinstance(value, str):
        return ([{"role": "assistant", "content": value}] if value else []), None
    if not isinstance(value, dict):
        return [], None
    if isinstance(value.get("choices"), list):
        choices = [c for c in value["choices"] if isinstance(c, dict)]
        finish = choices[0].get("finish_reason") if choices else None
        return [c["message"] for c in choices if isinstance(c.get("message"), dict)], finish
    if "role" in value or "parts" in value or "content" in value:
        return [value], value.get("finish_reason")
    if isinstance(value.get("text"), str):
        return [{"role": "assistant", "content": value["text"]}], value.get("finish_reason")
    return [], value.get("finish_reason")


def _vercel_response(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Vercel AI SDK's `ai.response.*` attributes as one assistant message."""
    content: list[dict[str, Any]] = []
    reasoning = attrs.get("ai.response.reasoning")
    if isinstance(reasoning, str) and reasoning:
        content.append({"type": "reasoning", "text": reasoning})
    for key in ("ai.response.text", "ai.response.object"):
        if isinstance(attrs.get(key), str):
            content.append({"type": "text", "text": attrs[key]})
    calls = otel.parse_json(attrs.get("ai.response.toolCalls"))
    if isinstance(calls, list):
        content.extend({"type": "tool-call", **c} for c in calls if isinstance(c, dict))
    return {"role": "assistant", "content": content} if content else None


def _unwrap(item: Any) -> Any:
    """OpenInference nests each flattened message under `message`."""
    if isinstance(item, dict) and isinstance(item.get("message"), dict) and len(item) == 1:
        return item["message"]
    return item


def _response(outputs: list[Any]) -> Message | None:
    if not outputs:
        return None
    blocks = tuple(b for raw in outputs for b in otel.normalize_message(raw).blocks)
    return Message("assistant", blocks)


def _finish_reason(attrs: Mapping[str, Any], outputs: list[Any], beside: Any) -> Any:
    for message in outputs:
        if isinstance(message, dict) and message.get("finish_reason"):
            return message["finish_reason"]
    reasons = attrs.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, list) and reasons:
        return reasons[0]
    if isinstance(reasons, str):
        parsed = otel.parse_json(reasons)
        return parsed[0] if isinstance(parsed, list) and parsed else parsed
    if attrs.get("ai.response.finishReason"):
        return attrs["ai.response.finishReason"]
    if beside is not None:
        return beside
    output = otel.parse_json(attrs.get("output.value"))
    if not isinstance(output, dict):
        return None
    # OpenInference keeps the provider's whole response in output.value: an Anthropic
    # message says `stop_reason`, a Chat Completion says it per choice.
    choices = output.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else {}
    return (
        output.get("finish_reason")
        or output.get("stop_reason")
        or (first.get("finish_reason") if isinstance(first, dict) else None)
    )


def _system(attrs: Mapping[str, Any], messages: list[Any]) -> str | None:
    """`gen_ai.system_instructions`, else the text of the system messages (kept there too)."""
    instructions = otel.system_text(attrs.get("gen_ai.system_instructions"))
    if instructions is not None:
        return instructions
    texts = [
        block.text
        for raw in messages
        if isinstance(raw, dict) and raw.get("role") in ("system", "developer")
        for block in otel.normalize_message(raw).blocks
        if block.kind == "text"
    ]
    return "\n\n".join(texts) if texts else None


def tool_definitions(attrs: Mapping[str, Any]) -> list[Any]:
    value = otel.parse_json(attrs.get("gen_ai.tool.definitions"))
    if isinstance(value, list):
        return value
    listed = otel.unflatten(attrs, "llm.tools")
    if listed:
        return [_tool_schema(item) for item in listed]
    vercel = attrs.get("ai.prompt.tools")
    if isinstance(vercel, list):
        return [otel.parse_json(item) for item in vercel]
    return []


def _tool_schema(item: Any) -> Any:
    tool = item.get("tool") if isinstance(item, dict) else None
    if isinstance(tool, dict) and "json_schema" in tool:
        return otel.parse_json(tool["json_schema"])
    return tool if tool is not None else item


def _model(attrs: Mapping[str, Any]) -> str | None:
    model = otel.first(
        attrs,
        "gen_ai.response.model",
        "gen_ai.request.model",
        "llm.model_name",
        "ai.response.model",
        "ai.model.id",
    )
    return model if isinstance(model, str) else None


# -- detection ----------------------------------------------------------------------------
def _recognise(value: Any) -> Detection | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("resourceSpans"), list):
        return Detection(0.95, "an OTLP JSON trace export (resourceSpans)")
    if _is_span(value):
        attrs = otel.attributes(value.get("attributes"))
        if _is_attribute_map(attrs) or any(k.startswith("ai.") for k in attrs):
            return Detection(0.9, "OpenTelemetry span objects with GenAI attributes")
        return None
    if _is_attribute_map(value):
        return Detection(0.85, "a span attribute map with gen_ai / OpenInference attributes")
    return None
