"""OTLP/HTTP trace exports: decode a request body and split its spans by trace id.

Protobuf bodies are decoded with the `opentelemetry-proto` package and turned into the
OTLP JSON shape (`resourceSpans` … with hex ids), the one the `otel-genai` adapter reads;
JSON bodies already are. Each trace id's spans become one export of their own (resource
and scope kept), which the receiver appends as one line to that trace's live trace.
"""

from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

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
        export: dict[str, Any] = MessageToDict(request)
        _hex_ids(export)
        return export
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
    if encoding in ("", "identity"):
        return body
    if encoding == "gzip":
        reader = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = reader.decompress(body, max_bytes + 1)
        except zlib.error as exc:
            raise OtlpRejected(400, f"The body is not valid gzip ({exc}).") from None
        if len(data) > max_bytes or reader.unconsumed_tail:
            raise OtlpRejected(413, f"The export passes {max_bytes:,} bytes once decompressed.")
        return data
    raise OtlpRejected(415, f"Content-Encoding {encoding!r} is not supported: send gzip or none.")


def _hex_ids(decoded: dict[str, Any]) -> None:
    """Protobuf JSON writes bytes as base64; OTLP JSON writes trace and span ids as hex."""
    for span in _all_spans(decoded):
        for key in ("traceId", "spanId", "parentSpanId"):
            if isinstance(span.get(key), str):
                span[key] = base64.b64decode(span[key]).hex()
        for link in span.get("links") or []:
            for key in ("traceId", "spanId"):
                if isinstance(link, dict) and isinstance(link.get(key), str):
                    link[key] = base64.b64decode(link[key]).hex()


def _all_spans(decoded: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for resource_spans in decoded.get("resourceSpans") or []:
        for scope_spans in (resource_spans or {}).get("scopeSpans") or []:
            for span in (scope_spans or {}).get("spans") or []:
                if isinstance(span, dict):
                    yield span


def split_by_trace(decoded: dict[str, Any]) -> SplitRequest:
    """One export per trace id; spans without a valid trace id are rejected."""
    result = SplitRequest()
    for resource_spans in decoded.get("resourceSpans") or []:
        if not isinstance(resource_spans, dict):
            result.problems.append("a resourceSpans entry is not an object")
            continue
        resource = resource_spans.get("resource")
        service = _service(resource)
        for scope_spans in resource_spans.get("scopeSpans") or []:
            if not isinstance(scope_spans, dict):
                result.problems.append("a scopeSpans entry is not an object")
                continue
            for span in scope_spans.get("spans") or []:
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
    for entry in span.get("attributes") or []:
        key = entry.get("key") if isinstance(entry, dict) else None
        if isinstance(key, str) and key.startswith(SIGNATURE_PREFIXES):
            return True
    return False


def _service(resource: Any) -> str | None:
    if not isinstance(resource, dict):
        return None
    for entry in resource.get("attributes") or []:
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
