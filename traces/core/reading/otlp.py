"""OTLP/HTTP trace exports: decode a request body and split its spans by trace id.

Protobuf bodies are decoded with the `opentelemetry-proto` package and turned into the
OTLP JSON shape (`resourceSpans` … with hex ids), the one the `otel-genai` adapter reads;
JSON bodies already are. Each trace id's spans become one export of their own (resource
and scope kept), which the receiver appends as one line to that trace's live trace.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import orjson
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsPartialSuccess,
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from traces.core.records import dataclass, field

from .content_coding import ContentCodingError, decoded

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
HEX_ID = re.compile(r"^[0-9a-fA-F]{32}$")
SIGNATURE_PREFIXES = ("gen_ai.", "llm.", "openinference.", "ai.")
"""Attributes that make a span part of an LLM loop (GenAI semconv, OpenInference, Vercel)."""
EVENT_PREFIXES = ("gen_ai.", "gemini_cli.")
"""Event names of log records about an LLM loop (GenAI semconv events, Gemini CLI's)."""


@dataclass(frozen=True)
class Signal:
    """One OTLP signal: its request, answer and partial-success messages, the top-level
    key of its JSON export and the name of the rejected count in its answer."""

    name: str
    request: type[Message]
    response: type[Message]
    partial: type[Message]
    resources: str
    rejected_field: str
    rejected_json: str


TRACES = Signal(
    "traces",
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
    ExportTracePartialSuccess,
    "resourceSpans",
    "rejected_spans",
    "rejectedSpans",
)
LOGS = Signal(
    "logs",
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
    ExportLogsPartialSuccess,
    "resourceLogs",
    "rejected_log_records",
    "rejectedLogRecords",
)
METRICS = Signal(
    "metrics",
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
    ExportMetricsPartialSuccess,
    "resourceMetrics",
    "rejected_data_points",
    "rejectedDataPoints",
)


class OtlpRejected(ValueError):
    """The whole request is refused; `status` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class TraceGroup:
    """The spans of one trace id in one request, as an OTLP JSON export of their own."""

    trace_id: str
    export: dict[str, Any]
    spans: int = 0
    genai: bool = False
    service: str | None = None
    rejected: int = 0
    conversation: str | None = None
    """The `gen_ai.conversation.id` that links this group's trace ids, if any."""

    @property
    def key(self) -> str:
        """The live trace's capture key: `otlp:<trace id>` or `otlp:conversation:<id>`."""
        if self.conversation:
            return f"otlp:conversation:{self.conversation}"
        return f"otlp:{self.trace_id}"


@dataclass
class SplitRequest:
    groups: dict[str, TraceGroup] = field(default_factory=dict)
    rejected: int = 0
    problems: list[str] = field(default_factory=list)
    logs: bool = False


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def decode(
    body: bytes,
    *,
    content_type: str,
    content_encoding: str,
    max_bytes: int,
    signal: Signal = TRACES,
) -> dict[str, Any]:
    """The request as OTLP JSON. Raises OtlpRejected (415 for a media type OTLP does not
    have, 400 for a body that cannot be read, 413 past `max_bytes` once decompressed)."""
    kind = media_type(content_type)
    if kind not in (PROTOBUF, JSON):
        raise OtlpRejected(
            415,
            f"Send OTLP as {PROTOBUF} or {JSON} (got {kind or 'no Content-Type'}).",
        )
    data = _decompressed(body, content_encoding.strip().lower(), max_bytes)
    if kind == PROTOBUF:
        request = signal.request()
        try:
            request.ParseFromString(data)
        except DecodeError as exc:
            raise OtlpRejected(400, f"The body is not an OTLP protobuf export ({exc}).") from None
        return message_dict(request)
    try:
        decoded = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise OtlpRejected(400, f"The body is not JSON ({exc}).") from None
    key = signal.resources
    if not isinstance(decoded, dict):
        raise OtlpRejected(400, f"An OTLP JSON export is an object with '{key}'.")
    if decoded and not isinstance(decoded.get(key, []), list):
        raise OtlpRejected(400, f"'{key}' must be a list.")
    return decoded


def _decompressed(body: bytes, encoding: str, max_bytes: int) -> bytes:
    try:
        return decoded(body, encoding, max_bytes)
    except ContentCodingError as exc:
        if exc.problem == "too_large":
            message = f"The export passes {max_bytes:,} bytes once decompressed."
            raise OtlpRejected(413, message) from None
        status = 415 if exc.problem == "unsupported" else 400
        raise OtlpRejected(status, str(exc)) from None


HEX_BYTES = frozenset(
    {
        ("opentelemetry.proto.trace.v1.Span", "trace_id"),
        ("opentelemetry.proto.trace.v1.Span", "span_id"),
        ("opentelemetry.proto.trace.v1.Span", "parent_span_id"),
        ("opentelemetry.proto.trace.v1.Span.Link", "trace_id"),
        ("opentelemetry.proto.trace.v1.Span.Link", "span_id"),
        ("opentelemetry.proto.logs.v1.LogRecord", "trace_id"),
        ("opentelemetry.proto.logs.v1.LogRecord", "span_id"),
    }
)
"""Ids OTLP JSON writes as hex (protobuf's JSON mapping would write base64)."""

_STRING_INTEGERS = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_Convert = Callable[[Any], Any]
_plans: dict[Any, tuple[str, _Convert | None, bool]] = {}


def message_dict(message: Message) -> dict[str, Any]:
    """A protobuf message as OTLP JSON: protobuf's JSON mapping (what `MessageToDict`
    writes: fields set, camelCase names, 64-bit integers as strings, enums by name,
    bytes in base64) but with trace and span ids in hex; read field by field from the
    message, several times faster than `MessageToDict`'s generic printer."""
    out: dict[str, Any] = {}
    for descriptor, value in message.ListFields():
        plan = _plans.get(descriptor)
        if plan is None:
            plan = _plans[descriptor] = _plan(descriptor)
        name, convert, repeated = plan
        if convert is None:
            out[name] = list(value) if repeated else value
        elif repeated:
            out[name] = [convert(item) for item in value]
        else:
            out[name] = convert(value)
    return out


def _plan(field: FieldDescriptor) -> tuple[str, _Convert | None, bool]:
    """(JSON name, how to convert a value or None to keep it, repeated) of a field."""
    repeated = bool(field.is_repeated)
    kind = field.type
    convert: _Convert | None = None
    if kind in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
        convert = message_dict
    elif kind == FieldDescriptor.TYPE_ENUM:
        names = {v.number: v.name for v in field.enum_type.values}

        def convert(value: int) -> Any:
            return names.get(value, value)

    elif kind in _STRING_INTEGERS:
        convert = str
    elif kind == FieldDescriptor.TYPE_BYTES:
        if (field.containing_type.full_name, field.name) in HEX_BYTES:
            convert = bytes.hex
        else:

            def convert(value: bytes) -> Any:
                return base64.b64encode(value).decode("ascii")

    elif kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        convert = _json_float
    return field.json_name, convert, repeated


def _json_float(value: float) -> Any:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


SPAN_KEYS = ("resourceSpans", "scopeSpans", "spans")
LOG_KEYS = ("resourceLogs", "scopeLogs", "logRecords")
CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id")
"""What links spans (and log records) of several trace ids into one conversation:
Gemini CLI starts a trace for each span and names its session in both."""
SAFE_KEY = re.compile(r"^[A-Za-z0-9._:@-]{1,100}$")


def split_by_trace(decoded: dict[str, Any], keys: tuple[str, str, str] = SPAN_KEYS) -> SplitRequest:
    """One export per trace id, or per conversation id for the trace ids its spans name
    (`gen_ai.conversation.id`); spans without a valid trace id are rejected. Log
    records (`keys=LOG_KEYS`) are grouped the same way; one with neither id is left out."""
    logs = keys == LOG_KEYS
    result = SplitRequest(logs=logs)
    items = list(_items(decoded, keys, result.problems))
    conversations: dict[str, str] = {}
    for _, _, _, item in items:
        trace_id = _trace_id(item)
        conversation = conversation_of(item)
        if trace_id is not None and conversation is not None:
            conversations.setdefault(trace_id, conversation)
    left_out = 0
    for resource_entry, resource, scope_entry, item in items:
        trace_id = _trace_id(item)
        conversation = conversation_of(item)
        if conversation is None and trace_id is not None:
            conversation = conversations.get(trace_id)
        if trace_id is None and (conversation is None or not logs):
            if logs:
                left_out += 1
            else:
                result.rejected += 1
            continue
        group_key = f"conversation:{conversation}" if conversation else str(trace_id)
        group = result.groups.get(group_key)
        if group is None:
            group = result.groups[group_key] = TraceGroup(
                trace_id or "", {keys[0]: []}, service=_service(resource), conversation=conversation
            )
        _place(group.export, keys, resource_entry, resource, scope_entry, item)
        group.spans += 1
        group.genai = group.genai or _is_genai(item)
    if result.rejected:
        result.problems.append(f"{result.rejected} span(s) without a valid 32-hex-digit traceId")
    if left_out:
        result.problems.append(
            f"{left_out} log record(s) with no traceId and no session.id were not stored"
        )
    return result


def _items(
    decoded: dict[str, Any], keys: tuple[str, str, str], problems: list[str]
) -> Iterator[tuple[dict[str, Any], Any, dict[str, Any], Any]]:
    """(resource entry, resource, scope entry, span or log record) of an export."""
    resources_key, scopes_key, items_key = keys
    for resource_entry in decoded.get(resources_key) or []:
        if not isinstance(resource_entry, dict):
            problems.append(f"a {resources_key} entry is not an object")
            continue
        resource = resource_entry.get("resource")
        for scope_entry in _entries(resource_entry, scopes_key, problems):
            if not isinstance(scope_entry, dict):
                problems.append(f"a {scopes_key} entry is not an object")
                continue
            for item in _entries(scope_entry, items_key, problems):
                yield resource_entry, resource, scope_entry, item


def _trace_id(item: Any) -> str | None:
    trace_id = item.get("traceId") if isinstance(item, dict) else None
    if not isinstance(trace_id, str) or not HEX_ID.match(trace_id) or not int(trace_id, 16):
        return None
    return trace_id.lower()


def conversation_of(item: Any) -> str | None:
    """The conversation a span or log record names, when it is a usable key."""
    if not isinstance(item, dict):
        return None
    for entry in _attributes(item):
        if isinstance(entry, dict) and entry.get("key") in CONVERSATION_KEYS:
            value = entry.get("value")
            text = value.get("stringValue") if isinstance(value, dict) else None
            if isinstance(text, str) and SAFE_KEY.match(text):
                return text
    return None


def _entries(parent: dict[str, Any], key: str, problems: list[str]) -> list[Any]:
    """A list member of an export ([] when absent; a problem noted when not a list)."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(f"'{key}' is not a list")
        return []
    return value


def _attributes(owner: dict[str, Any]) -> list[Any]:
    value = owner.get("attributes")
    return value if isinstance(value, list) else []


def _place(
    export: dict[str, Any],
    keys: tuple[str, str, str],
    resource_spans: dict[str, Any],
    resource: Any,
    scope_spans: dict[str, Any],
    span: dict[str, Any],
) -> None:
    """Append a span (or log record) under its own resource and scope in an export."""
    resources_key, scopes_key, items_key = keys
    resources = export[resources_key]
    if not resources or resources[-1].get("_source") is not resource_spans:
        entry: dict[str, Any] = {"_source": resource_spans, scopes_key: []}
        if resource is not None:
            entry["resource"] = resource
        resources.append(entry)
    scopes = resources[-1][scopes_key]
    if not scopes or scopes[-1].get("_source") is not scope_spans:
        scope: dict[str, Any] = {"_source": scope_spans, items_key: []}
        if scope_spans.get("scope") is not None:
            scope["scope"] = scope_spans["scope"]
        scopes.append(scope)
    scopes[-1][items_key].append(span)


def export_line(group: TraceGroup) -> bytes:
    """A trace's export as one JSON line (no newline)."""
    resources_key = next(iter(group.export))
    scopes_key = SPAN_KEYS[1] if resources_key == SPAN_KEYS[0] else LOG_KEYS[1]
    clean = {
        resources_key: [
            {
                **{k: v for k, v in entry.items() if k not in ("_source", scopes_key)},
                scopes_key: [
                    {k: v for k, v in scope.items() if k != "_source"}
                    for scope in entry[scopes_key]
                ],
            }
            for entry in group.export[resources_key]
        ]
    }
    return orjson.dumps(clean)


def _is_genai(span: Any) -> bool:
    if not isinstance(span, dict):
        return False
    if str(span.get("eventName") or "").startswith(EVENT_PREFIXES):
        return True
    for entry in _attributes(span):
        key = entry.get("key") if isinstance(entry, dict) else None
        if isinstance(key, str) and key.startswith(SIGNATURE_PREFIXES):
            return True
        if key == "event.name":
            value = entry.get("value")
            name = value.get("stringValue") if isinstance(value, dict) else None
            if isinstance(name, str) and name.startswith(EVENT_PREFIXES):
                return True
    return False


def _service(resource: Any) -> str | None:
    if not isinstance(resource, dict):
        return None
    for entry in _attributes(resource):
        if isinstance(entry, dict) and entry.get("key") == "service.name":
            value = entry.get("value") or {}
            name = value.get("stringValue") if isinstance(value, dict) else None
            return name if isinstance(name, str) else None
    return None


def response_body(*, protobuf: bool, rejected: int, message: str, signal: Signal = TRACES) -> bytes:
    """The signal's Export…ServiceResponse, with `partial_success` when something was
    left out."""
    if protobuf:
        response = signal.response()
        if rejected or message:
            partial = signal.partial(**{signal.rejected_field: rejected, "error_message": message})
            response.partial_success.CopyFrom(partial)
        serialized: bytes = response.SerializeToString()
        return serialized
    if not (rejected or message):
        return b"{}"
    answer = {"partialSuccess": {signal.rejected_json: rejected, "errorMessage": message}}
    return orjson.dumps(answer)
