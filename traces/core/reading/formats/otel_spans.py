"""Reading OpenTelemetry spans, whatever they were serialised as: OTLP JSON exports,
arrays of span objects (OTLP, OTel JS `ReadableSpan`, Python `span.to_json()`) or a bare
attribute map. `formats.otel_genai` decides what each span is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traces.core.records import dataclass

from ..dialects import otel_genai as otel
from ..timeparse import to_epoch_seconds
from ._index.otel_genai import SIGNATURE_PREFIXES as SIGNATURE_PREFIXES
from ._index.otel_genai import is_attribute_map as is_attribute_map
from ._index.otel_genai import is_span as is_span
from .otel_logs import as_resource_spans

CONTENT_EVENTS = {
    "gen_ai.content.prompt",
    "gen_ai.content.completion",
    "gen_ai.client.inference.operation.details",
}
"""Span events that carry the prompt and completion instead of span attributes."""
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


# -- reading spans ------------------------------------------------------------------------
def extract_spans(value: Any) -> tuple[list[Span], list[str]]:
    """Every span in one record, and what could not be read."""
    if not isinstance(value, dict):
        return [], ["expected a JSON object: an OTLP export, a span or an attribute map"]
    if isinstance(value.get("resourceSpans"), list):
        return _from_resources(value["resourceSpans"])
    if isinstance(value.get("resourceLogs"), list):  # the receiver's /v1/logs
        return _from_resources(as_resource_spans(value["resourceLogs"]))
    if isinstance(value.get("scopeSpans"), list) or isinstance(
        value.get("instrumentationLibrarySpans"), list
    ):
        return _from_resources([value])
    if isinstance(value.get("spans"), list):
        return _from_list(value["spans"], None)
    if is_span(value):
        return [read_span(value, 0, None)], []
    if is_attribute_map(value):
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
    events = raw.get("events")
    for event in events if isinstance(events, list) else []:
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


def span_ids(span: Span) -> dict[str, Any]:
    ids = {
        "name": span.name,
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_id,
    }
    return {k: v for k, v in ids.items() if v is not None}


def chronological(span: Span) -> tuple[bool, float, int]:
    return (span.started_at is None, span.started_at or 0.0, span.index)
