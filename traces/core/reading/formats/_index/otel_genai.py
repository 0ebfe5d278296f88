"""The claim `otel_genai` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/otel_genai.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...dialects import otel_genai as otel
from ..base import Detection

NAME = "otel-genai"
"""The name of the adapter whose `sniff` this is."""

SIGNATURE_PREFIXES = ("gen_ai.", "llm.", "openinference.")
"""Attribute-name prefixes of the GenAI conventions (OpenTelemetry, OpenLLMetry, OpenInference)."""


def is_span(value: dict[str, Any]) -> bool:
    has_identity = any(
        key in value for key in ("spanContext", "context", "traceId", "spanId", "startTimeUnixNano")
    )
    return has_identity and ("attributes" in value or "name" in value)


def is_attribute_map(value: dict[str, Any]) -> bool:
    return any(
        key.startswith(SIGNATURE_PREFIXES) or key == "ai.operationId"
        for key in value
        if isinstance(key, str)
    )


# -- detection ----------------------------------------------------------------------------
def _recognise(value: Any) -> Detection | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("resourceSpans"), list):
        return Detection(0.95, "an OTLP JSON trace export (resourceSpans)")
    if isinstance(value.get("resourceLogs"), list):
        return Detection(0.6, "an OTLP JSON log export (resourceLogs)")
    if is_span(value):
        attrs = otel.attributes(value.get("attributes"))
        if is_attribute_map(attrs) or any(k.startswith("ai.") for k in attrs):
            return Detection(0.9, "OpenTelemetry span objects with GenAI attributes")
        return None
    if is_attribute_map(value):
        return Detection(0.85, "a span attribute map with gen_ai / OpenInference attributes")
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        claim = _recognise(value)
        if claim is not None:
            return claim
    return None
