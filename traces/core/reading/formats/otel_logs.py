"""OTLP log records that describe a model call, read as spans.

The GenAI semantic conventions put a call's prompt, response and usage in one event,
`gen_ai.client.inference.operation.details` (Gemini CLI emits it with each
`gemini_cli.api_request` / `api_response` record, packages/core/src/telemetry/types.ts).
The record made after the response (it has the output messages or the usage) becomes a
chat span; the one made before the request (its input only, repeated in the other) and
every other record are ignored. The record carries the span it was logged in
(`spanId`, Gemini CLI's `llm_call`): the span made of it is that span's child, so the
two layers of one call merge (`otel_layers`). `session.id` names the conversation.
"""

from __future__ import annotations

from typing import Any

from ..dialects import otel_genai as otel

OPERATION_DETAILS = "gen_ai.client.inference.operation.details"
RESPONSE_KEYS: tuple[str, ...] = ("gen_ai.output.messages", "gen_ai.usage.input_tokens")
RESPONSE_KEYS += ("gen_ai.usage.output_tokens", "gen_ai.response.id")
LOG_SPAN_PREFIX = "log:"
"""The span id of a span made of a log record starts with it."""


def as_resource_spans(resource_logs: list[Any]) -> list[Any]:
    """`resourceLogs` as `resourceSpans` holding the spans their call records make."""
    resources: list[Any] = []
    for entry in resource_logs:
        if not isinstance(entry, dict):
            resources.append(entry)  # reported as not an object by the span reader
            continue
        scopes = entry.get("scopeLogs")
        spans = [
            span
            for scope in (scopes if isinstance(scopes, list) else [])
            if isinstance(scope, dict) and isinstance(scope.get("logRecords"), list)
            for span in map(_span, scope["logRecords"])
            if span is not None
        ]
        converted: dict[str, Any] = {"scopeSpans": [{"spans": spans}]}
        if entry.get("resource") is not None:
            converted["resource"] = entry["resource"]
        resources.append(converted)
    return resources


def _span(record: Any) -> dict[str, Any] | None:
    """The chat span of a call's operation-details record; None for any other record."""
    if not isinstance(record, dict):
        return None
    raw = record.get("attributes")
    entries = [e for e in raw if isinstance(e, dict)] if isinstance(raw, list) else []
    attrs = otel.attributes(entries)
    name = record.get("eventName") or attrs.get("event.name")
    if name != OPERATION_DETAILS or not any(key in attrs for key in RESPONSE_KEYS):
        return None
    extra = []
    if "gen_ai.operation.name" not in attrs:
        extra.append(_string("gen_ai.operation.name", "chat"))
    session = attrs.get("session.id")
    if "gen_ai.conversation.id" not in attrs and isinstance(session, str) and session:
        extra.append(_string("gen_ai.conversation.id", session))
    when = record.get("timeUnixNano") or record.get("observedTimeUnixNano")
    parent = record.get("spanId") or None
    span: dict[str, Any] = {
        "spanId": f"{LOG_SPAN_PREFIX}{parent or ''}:{when}",
        "name": name,
        "startTimeUnixNano": when,
        "endTimeUnixNano": when,
        "attributes": entries + extra,
    }
    if record.get("traceId"):
        span["traceId"] = record["traceId"]
    if parent:
        span["parentSpanId"] = parent
    return span


def _string(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}
