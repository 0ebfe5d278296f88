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

One job a module: `otel_spans` reads the spans of any serialisation, `otel_messages`
what a chat span says; this one decides what each span is and makes the events.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

from ...coerce import parse_arguments
from ...model import Exchange, LineError, ToolTiming
from ..dialects import otel_genai as otel
from ..records import Record
from ._index import otel_genai as scoring
from .base import Adapter, AdapterEvent, Detection
from .otel_gemini_cli import gemini_cli_tool
from .otel_layers import CallLayers
from .otel_messages import (
    CONTENT_KEYS,
    CONTENT_PREFIXES,
    finish_reason,
    input_messages,
    model_of,
    output_messages,
    response_message,
    system_of,
    tool_definitions,
)
from .otel_spans import (
    Span,
    chronological,
    extract_spans,
    span_ids,
)
from .registry import register

__all__ = ["OtelGenAIAdapter", "Span", "extract_spans", "span_role"]

SpanRole = Literal["chat", "tool", "skip"]
CHAT_OPERATIONS = {"chat", "text_completion", "generate_content", "completion", "llm_call"}
EMBEDDING_OPERATIONS = {"embeddings", "embedding"}
TOOL_OPERATIONS = {"execute_tool", "tool_call"}
"""`llm_call` and `tool_call` are Gemini CLI's own operation names."""
TOOL_ID_KEYS: tuple[str, ...] = ("gen_ai.tool.call.id", "gen_ai.tool.call_id", "tool_call.id")
TOOL_ID_KEYS += ("tool.call_id", "ai.toolCall.id")
TOOL_ARGUMENT_KEYS = ("gen_ai.tool.call.arguments", "ai.toolCall.args", "input.value", "input")
TOOL_RESULT_KEYS = ("gen_ai.tool.call.result", "ai.toolCall.result", "output.value", "output")
"""Where a tool-execution span keeps what the tool was given and what it returned."""


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
        """Start of the latest call emitted, per loop (trace or conversation id)."""
        self._layers = CallLayers()
        """The span layers of each call, merged into one (`otel_layers`)."""

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        spans, problems = extract_spans(record.value)
        for problem in problems:
            yield LineError(record.line, problem)
        calls: list[tuple[Span, Exchange]] = []
        timings: list[tuple[Span, ToolTiming]] = []
        others: list[Span] = []
        for span in spans:
            try:
                role = span_role(span)
                if role != "chat":
                    others.append(span)
                if role == "chat":
                    calls.append((span, self._exchange(record.line, span)))
                elif role == "tool":
                    timing = _timing(record.line, span)
                    if timing is not None:
                        timings.append((span, timing))
            except Exception as exc:  # one odd span must not sink the rest of the export
                label = span.name or f"#{span.index + 1}"
                yield LineError(record.line, f"span {label} could not be read: {exc}")
        yield from self._emit(self._layers.take(calls, others))
        for span, timing in sorted(timings, key=lambda pair: chronological(pair[0])):
            if timing.is_error and span.trace_id is not None:
                self._held.append((loop_of(span), timing))
            else:
                yield timing
        yield from self._release()

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._emit(self._layers.close())
        yield from self._release(everything=True)

    def _emit(self, calls: list[tuple[Span, Exchange]]) -> Iterator[AdapterEvent]:
        for span, exchange in calls:
            yield exchange
            if span.trace_id is not None and span.started_at is not None:
                loop = loop_of(span)
                latest = self._latest_call.get(loop, span.started_at)
                self._latest_call[loop] = max(latest, span.started_at)

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
        conversation = conversation_of(span)
        messages = input_messages(attrs)
        outputs, output_finish = output_messages(attrs)
        response = response_message(outputs)
        finish = finish_reason(attrs, outputs, output_finish)
        has_tools = response is not None and bool(response.tool_uses)
        extra: dict[str, Any] = {"span": span_ids(span)}
        if finish is not None:
            extra["finish_reason"] = finish
        elif attrs.get("gen_ai.operation.name") == "llm_call" and response and not span.error:
            # Gemini CLI writes no finish reason; its turn goes on only after function
            # calls, so a whole response without one ended the turn.
            finish = "tool_calls" if has_tools else "stop"
            extra["finish_reason_inferred"] = True
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
            system=system_of(attrs, messages),
            tools=tool_definitions(attrs),
            model=model_of(attrs),
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
            loop_key=loop_of(span) if span.trace_id or conversation else None,
            loop_label=_loop_label(span, conversation),
        )


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


def conversation_of(span: Span) -> str | None:
    """`gen_ai.conversation.id`: Gemini CLI gives each span a trace of its own and links
    them only by it, so it is the loop when present."""
    value = span.attrs.get("gen_ai.conversation.id")
    return value if isinstance(value, str) and value else None


def loop_of(span: Span) -> str:
    return conversation_of(span) or span.trace_id or ""


def _loop_label(span: Span, conversation: str | None) -> str | None:
    if conversation:
        return f"conversation {conversation}"
    return f"trace {span.trace_id}" if span.trace_id else None


def _timing(line: int, span: Span) -> ToolTiming | None:
    attrs = span.attrs
    tool_id = otel.tool_id(otel.first(attrs, *TOOL_ID_KEYS))
    if tool_id is None:
        return None  # without an id the execution cannot be paired with any call
    name = otel.first(attrs, "gen_ai.tool.name", "tool.name", "ai.toolCall.name")
    arguments = otel.first(attrs, *TOOL_ARGUMENT_KEYS)
    result = otel.first(attrs, *TOOL_RESULT_KEYS)
    failed = bool(span.error)
    if "gen_ai.tool.call_id" in attrs:  # Gemini CLI: the request and the completed call
        arguments, result, failed = gemini_cli_tool(attrs, failed)
    return ToolTiming(
        line,
        tool_id,
        name=name if isinstance(name, str) else None,
        started_at=span.started_at,
        ended_at=span.ended_at,
        is_error=True if failed else None,
        result_text=None if result is None else otel.result_text(result),
        input=None if arguments is None else parse_arguments(arguments),
    )
