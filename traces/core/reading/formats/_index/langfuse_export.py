"""The claim `langfuse_export` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/langfuse_export.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection

NAME = "langfuse"
"""The name of the adapter whose `sniff` this is."""

OBSERVATION_TYPES = (  # a tuple: `in` compares, so an odd value (a list) cannot raise
    "GENERATION",
    "SPAN",
    "EVENT",
    "TOOL",
    "AGENT",
    "CHAIN",
    "RETRIEVER",
    "EMBEDDING",
    "EVALUATOR",
    "GUARDRAIL",
)


def _is_observation(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") in OBSERVATION_TYPES
        and ("traceId" in value or "parentObservationId" in value)
        and "startTime" in value
    )


def _observations_of(value: Any) -> tuple[dict[str, Any] | None, list[Any]] | None:
    """(trace, observations) of a record: an export, a list, or one observation."""
    if isinstance(value, dict) and isinstance(value.get("observations"), list):
        trace = value.get("trace") if isinstance(value.get("trace"), dict) else None
        if trace is None and "id" in value and "timestamp" in value:
            trace = value  # GET /api/public/traces/<id> answers the trace with its observations
        return trace, value["observations"]
    if _is_observation(value):
        return None, [value]
    if isinstance(value, list) and any(_is_observation(v) for v in value[:5]):
        return None, value
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    for value in values:
        found = _observations_of(value)
        if found is None:
            continue
        trace, observations = found
        if any(_is_observation(o) for o in observations[:20]):
            if trace is not None:
                return Detection(0.95, "a Langfuse trace export (trace and observations)")
            return Detection(0.9, "Langfuse observations (type, traceId, startTime)")
    return None
