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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from .content_coding import ContentCodingError, decoded

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
HEX_ID = re.compile(r"^[0-9a-fA-F]{32}$")
SIGNATURE_PREFIXES = ("gen_ai.", "llm.", "openinference.", "ai.")
"""Attributes that make a span part of an LLM loop (GenAI semconv, OpenInference, Vercel)."""


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


@dataclass
class SplitRequest:
    groups: dict[str, TraceGroup] = field(default_factory=dict)
    rejected: int = 0
    problems: list[str] = field(default_factory=list)


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def decode(
    body: bytes, *, content_type: str, content_encoding: str, max_bytes: int
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
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(data)
        except DecodeError as exc:
            raise OtlpRejected(400, f"The body is not an OTLP protobuf export ({exc}).") from None
        return message_dict(request)
    try:
        decoded = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise OtlpRejected(400, f"The body is not JSON ({exc}).") from None
    if not isinstance(decoded, dict):
        raise OtlpRejected(400, "An OTLP JSON export is an object with 'resourceSpans'.")
    if decoded and not isinstance(decoded.get("resourceSpans", []), list):
        raise OtlpRejected(400, "'resourceSpans' must be a list.")
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


def split_by_trace(decoded: dict[str, Any]) -> SplitRequest:
    """One export per trace id; spans without a valid trace id are rejected."""
    result = SplitRequest()
    for resource_spans in decoded.get("resourceSpans") or []:
        if not isinstance(resource_spans, dict):
            result.problems.append("a resourceSpans entry is not an object")
            continue
        resource = resource_spans.get("resource")
        service = _service(resource)
        for scope_spans in _entries(resource_spans, "scopeSpans", result.problems):
            if not isinstance(scope_spans, dict):
                result.problems.append("a scopeSpans entry is not an object")
                continue
            for span in _entries(scope_spans, "spans", result.problems):
                trace_id = span.get("traceId") if isinstance(span, dict) else None
                if (
                    not isinstance(trace_id, str)
                    or not HEX_ID.match(trace_id)
                    or not int(trace_id, 16)
                ):
                    result.rejected += 1
                    continue
                group = result.groups.get(trace_id.lower())
                if group is None:
                    group = result.groups[trace_id.lower()] = TraceGroup(
                        trace_id.lower(), {"resourceSpans": []}, service=service
                    )
                _place(group.export, resource_spans, resource, scope_spans, span)
                group.spans += 1
                group.genai = group.genai or _is_genai(span)
    if result.rejected:
        result.problems.append(f"{result.rejected} span(s) without a valid 32-hex-digit traceId")
    return result


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
    resource_spans: dict[str, Any],
    resource: Any,
    scope_spans: dict[str, Any],
    span: dict[str, Any],
) -> None:
    """Append a span under its own resource and scope in a trace's export."""
    resources = export["resourceSpans"]
    if not resources or resources[-1].get("_source") is not resource_spans:
        entry: dict[str, Any] = {"_source": resource_spans, "scopeSpans": []}
        if resource is not None:
            entry["resource"] = resource
        resources.append(entry)
    scopes = resources[-1]["scopeSpans"]
    if not scopes or scopes[-1].get("_source") is not scope_spans:
        scope: dict[str, Any] = {"_source": scope_spans, "spans": []}
        if scope_spans.get("scope") is not None:
            scope["scope"] = scope_spans["scope"]
        scopes.append(scope)
    scopes[-1]["spans"].append(span)


def export_line(group: TraceGroup) -> bytes:
    """A trace's export as one JSON line (no newline)."""
    clean = {
        "resourceSpans": [
            {
                **{k: v for k, v in entry.items() if k not in ("_source", "scopeSpans")},
                "scopeSpans": [
                    {k: v for k, v in scope.items() if k != "_source"}
                    for scope in entry["scopeSpans"]
                ],
            }
            for entry in group.export["resourceSpans"]
        ]
    }
    return orjson.dumps(clean)


def _is_genai(span: dict[str, Any]) -> bool:
    for entry in _attributes(span):
        key = entry.get("key") if isinstance(entry, dict) else None
        if isinstance(key, str) and key.startswith(SIGNATURE_PREFIXES):
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


def response_body(*, protobuf: bool, rejected: int, message: str) -> bytes:
    """An ExportTraceServiceResponse, with `partial_success` when something was left out."""
    if protobuf:
        response = ExportTraceServiceResponse()
        if rejected or message:
            response.partial_success.CopyFrom(
                ExportTracePartialSuccess(rejected_spans=rejected, error_message=message)
            )
        serialized: bytes = response.SerializeToString()
        return serialized
    if not (rejected or message):
        return b"{}"
    return orjson.dumps({"partialSuccess": {"rejectedSpans": rejected, "errorMessage": message}})
