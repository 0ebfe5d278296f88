"""Say why no format claimed a file: what it looks like, the closest formats, what to do.

"No supported trace format" alone leaves a user guessing. The message names the shape of
the first records (top-level keys and their types), the formats whose marker keys come
closest and what each of them needed that the file lacks, and the two ways in: choosing
the format by hand, or describing the log with a mapping file.

A format is named as close only when its shape is: the records share one of its
distinctive marker keys (`parentUuid`, `payload`, `resourceSpans`: keys few other logs
have). Keys almost every JSON log carries (`type`, `timestamp`, `message`, `id`, `model`,
...) say nothing about the shape on their own, so a file that shares only those is told
plainly that no known format is close. Formats sharing more distinctive keys come first,
then those sharing a larger part of their markers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import Adapter

DESCRIBED_RECORDS = 3
DESCRIBED_KEYS = 12
CLOSEST = 3

GENERIC_KEYS = frozenset(
    {
        "id", "type", "subtype", "kind", "timestamp", "ts", "time", "created", "created_at",
        "model", "content", "message", "messages", "role", "text", "name", "data",
        "request", "response", "input", "output", "result", "results", "status", "error",
        "version", "event", "object", "attributes", "metadata", "history",
        "session_id", "sessionId", "startTime", "uuid", "agent", "trace", "steps", "spans",
    }
)  # fmt: skip
"""Marker keys so common in JSON logs that sharing them says nothing about a shape."""

MARKERS: Mapping[str, tuple[str, ...]] = {
    "anthropic-messages": ("request", "response", "model", "messages", "content", "stop_reason"),
    "atif": ("schema_version", "session_id", "agent", "steps", "step_id", "source"),
    "claude-code": ("type", "sessionId", "uuid", "parentUuid", "message", "timestamp"),
    "codex-rollout": ("timestamp", "type", "payload"),
    "inspect-ai": ("eval", "plan", "results", "samples", "version", "status"),
    "loop-inspector": ("event", "call_id", "request", "response", "tool_use_id", "ts"),
    "message-list": ("messages", "role", "content", "traj", "trajectory", "history"),
    "openai-chat": ("request", "response", "messages", "choices", "model", "object"),
    "openai-responses": ("request", "response", "input", "output", "object", "model"),
    "otel-genai": ("resourceSpans", "scopeSpans", "spans", "attributes", "traceId", "spanId"),
}
"""Top-level keys a record of each format carries (one level down for wrapper documents),
for formats that do not declare `Adapter.markers` themselves."""


def describe_value(value: Any) -> str:
    """A JSON value's type in a few words: `text`, `number`, `list of 3`, `object`."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    if isinstance(value, list):
        return f"list of {len(value)}"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def describe_record(value: Any) -> str:
    """One record as `an object with keys a (text), b (list of 2), …`."""
    if not isinstance(value, dict):
        return (
            f"a {describe_value(value)}"
            if not isinstance(value, list)
            else (
                f"a list of {len(value)} items"
                + (f", the first {describe_record(value[0])}" if value else "")
            )
        )
    if not value:
        return "an empty object"
    keys = list(value)[:DESCRIBED_KEYS]
    shown = ", ".join(f"{_short(key)} ({describe_value(value[key])})" for key in keys)
    more = f" and {len(value) - len(keys)} more" if len(value) > len(keys) else ""
    return f"an object with keys {shown}{more}"


def _short(key: Any, limit: int = 40) -> str:
    text = str(key)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _keys_of(values: Sequence[Any]) -> set[str]:
    """Top-level keys of the first records, and of the items of a wrapper document."""
    keys: set[str] = set()
    for value in values[: DESCRIBED_RECORDS * 4]:
        items = [value]
        if isinstance(value, dict):
            items.extend(v for v in value.values() if isinstance(v, dict))
            for inner in value.values():
                if isinstance(inner, list) and inner and isinstance(inner[0], dict):
                    items.append(inner[0])
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            items.append(value[0])
        for item in items:
            if isinstance(item, dict):
                keys.update(str(k) for k in item)
    return keys


def markers_of(adapter: type[Adapter]) -> tuple[str, ...]:
    return tuple(getattr(adapter, "markers", ()) or MARKERS.get(adapter.name, ()))


def is_close(markers: Sequence[str], found: Sequence[str]) -> bool:
    """Whether sharing `found` of a format's `markers` makes a file close to its shape:
    it must share a distinctive marker (common keys alone never do, however many of the
    format's markers they are: `timestamp` and `type` are two of Codex's three)."""
    return any(m not in GENERIC_KEYS for m in found)


def closest_formats(
    values: Sequence[Any], candidates: Sequence[type[Adapter]]
) -> list[tuple[type[Adapter], list[str], list[str]]]:
    """The formats close to the records' shape (see `is_close`), closest first:
    (adapter, found, missing)."""
    keys = _keys_of(values)
    ranked = []
    for adapter in candidates:
        markers = markers_of(adapter)
        found = [m for m in markers if m in keys]
        if not markers or not is_close(markers, found):
            continue
        distinctive = sum(1 for m in found if m not in GENERIC_KEYS)
        missing = [m for m in markers if m not in keys]
        share = len(found) / len(markers)
        ranked.append(((-distinctive, -share, -len(found), adapter.name), adapter, found, missing))
    ranked.sort(key=lambda item: item[0])
    return [(adapter, found, missing) for _, adapter, found, missing in ranked[:CLOSEST]]


def shared_common_keys(values: Sequence[Any], candidates: Sequence[type[Adapter]]) -> list[str]:
    """The marker keys of any format that the records carry (when none is close, these
    are all common ones), in a stable order."""
    keys = _keys_of(values)
    markers = {m for adapter in candidates for m in markers_of(adapter)}
    return sorted(keys & markers)


def describe_records(values: Sequence[Any]) -> str:
    """The first records, consecutive ones of the same shape said once."""
    groups: list[tuple[int, int, str]] = []
    for number, value in enumerate(values[:DESCRIBED_RECORDS], start=1):
        text = describe_record(value)
        if groups and groups[-1][2] == text:
            groups[-1] = (groups[-1][0], number, text)
        else:
            groups.append((number, number, text))
    return "; ".join(
        f"record {first} is {text}" if first == last else f"records {first}-{last} are each {text}"
        for first, last, text in groups
    )


def _http_paths(values: Sequence[Any]) -> list[str]:
    """Where recorded HTTP requests went (VCR cassettes, proxy logs), without the query."""
    paths: list[str] = []
    for value in values:
        request = value.get("request") if isinstance(value, dict) else None
        url = request.get("url") or request.get("uri") if isinstance(request, dict) else None
        if isinstance(url, str):
            path = _short(url.split("?", 1)[0], 120)
            if path not in paths:
                paths.append(path)
    return paths[:DESCRIBED_RECORDS]


def explain_no_format(values: Sequence[Any], candidates: Sequence[type[Adapter]]) -> str:
    """The whole message for a file no adapter claimed."""
    lines = [
        "No supported trace format recognised this file.",
        f"It holds {len(values)}{'+' if len(values) >= 20 else ''} record(s); "
        + describe_records(values)
        + ".",
    ]
    paths = _http_paths(values)
    if paths:
        lines.append("Its HTTP requests go to " + ", ".join(paths) + ".")
    close = closest_formats(values, candidates)
    if close:
        reasons = [
            f"{adapter.label} ({adapter.name}): has {', '.join(found)}"
            + (f" but not {', '.join(missing)}" if missing else ", but not in its shape")
            for adapter, found, missing in close
        ]
        lines.append("Closest formats, and why each refused: " + "; ".join(reasons) + ".")
    else:
        names = ", ".join(a.name for a in candidates)
        common = shared_common_keys(values, candidates)
        shared = (
            f" it shares only keys most JSON logs have ({', '.join(common)}), which say "
            "nothing about its shape"
            if common
            else " it shares no key with any of them"
        )
        lines.append(f"None of the known formats ({names}) is close to it:{shared}.")
    lines.append(
        "If you know the format, choose it with --format NAME (the Format field on the "
        "upload form, format= on the API). For a log of your own, describe it with a "
        "mapping file: --mapping FILE, the Mapping field, or mapping= on the API "
        "(see docs/mapping.md)."
    )
    return " ".join(lines)
