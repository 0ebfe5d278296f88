"""Loop Inspector's own event log (`loop-inspector/events/v1`), for agents that log directly.

One JSON object per line (see docs/event-format.md and the JSON Schema in
`traces/core/reading/schemas/loop-inspector-events.schema.json`):
- `meta` (optional, first): `{format: "loop-inspector/events/v1", provider?, agent?}`;
- `request`: `{call_id, ts, body, provider?, loop_id?, loop_label?, parent_tool_call_id?}`;
- `response`: `{call_id, ts, body | error, status?, provider?}`;
- `tool_start` / `tool_end`: `{tool_call_id, name?, ts, is_error? (tool_end)}`.

Every line is held to the schema (compiled once; a line of the common, plainly valid
shapes is accepted by a quick check that never accepts more than the schema does, since
full validation costs about a millisecond a line). A request and its response
become one `Exchange`; the provider bodies are read by that provider's pair adapter
(`anthropic-messages`, `openai-chat`, `openai-responses`), so the bodies mean exactly what
they mean in request logs. Tool lines become `ToolTiming`s, so real tool durations show.
A request still without a response when the input ends is a failed call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

from traces.core.records import dataclass, replace

from ...model import Exchange, LineError, ToolTiming
from ..dialects import anthropic
from ..records import Record
from ..timeparse import to_epoch_seconds
from ._index import loop_inspector as scoring
from ._index.loop_inspector import FORMAT_ID
from .base import Adapter, AdapterEvent, Detection
from .registry import get_adapter, register

SCHEMA_FILE = "loop-inspector-events.schema.json"
PROVIDER_ADAPTERS = {
    "anthropic": "anthropic-messages",
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
}
"""Which pair adapter reads each provider's bodies."""
REQUEST_FIELDS = frozenset(
    {"type", "call_id", "ts", "provider", "body", "loop_id", "loop_label", "parent_tool_call_id"}
)
RESPONSE_FIELDS = frozenset({"type", "call_id", "ts", "provider", "body", "status", "error"})
NO_RESPONSE = "no response recorded"
DEFAULT_PROVIDER = "anthropic"
OPENAI_ONLY_ROLES = frozenset({"system", "developer", "tool", "function"})
MESSAGE_CHARS = 300

if TYPE_CHECKING:  # jsonschema is imported when a line needs it: it costs ~60 ms to load
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


@cache
def event_validator() -> Draft202012Validator:
    """The published schema, read beside this package and compiled once."""
    from importlib import resources  # tempfile and more: only when validating

    from jsonschema import Draft202012Validator

    text = resources.files("traces.core.reading").joinpath("schemas", SCHEMA_FILE).read_bytes()
    schema = orjson.loads(text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_problem(value: Any) -> str | None:
    """Why a line is not a valid event (where, and what), or None when it is valid."""
    if plainly_valid(value):
        return None
    from jsonschema.exceptions import best_match

    error = best_match(event_validator().iter_errors(value))
    if error is None:
        return None
    where = "" if error.json_path == "$" else f"{error.json_path}: "
    return f"not a valid {FORMAT_ID} event: {where}{_explain(error)}"


def _explain(error: ValidationError) -> str:
    """jsonschema's message, without dumping a whole request body into it."""
    if error.validator == "anyOf" and all(
        isinstance(option, dict) and "required" in option for option in error.validator_value
    ):
        names = " or ".join(repr(option["required"][0]) for option in error.validator_value)
        return f"needs {names}"
    if error.absolute_path and error.absolute_path[-1] == "ts":
        return f"{error.instance!r} is not an ISO 8601 time or epoch seconds"[:MESSAGE_CHARS]
    message: str = error.message
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 1] + "…"
    return message


# -- the quick check -----------------------------------------------------------------------
# Field checks mirroring the schema's properties. `plainly_valid` accepts a line only when
# every check passes, so it is never more lenient than the schema (a property test holds
# it to that); anything it does not accept goes to jsonschema, which has the last word.
ISO_PREFIX = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}")


def _is_id(value: Any) -> bool:
    return type(value) is str and value != ""


def _is_ts(value: Any) -> bool:
    if type(value) in (int, float):
        return bool(value > 0)
    return type(value) is str and ISO_PREFIX.match(value) is not None


def _is_provider(value: Any) -> bool:
    return type(value) is str and value in PROVIDER_ADAPTERS


def _is_text(value: Any) -> bool:
    return type(value) is str


def _is_status(value: Any) -> bool:
    return type(value) is int and 100 <= value <= 599


FieldCheck = Callable[[Any], bool]
PLAIN_SHAPES: dict[str, tuple[tuple[str, ...], dict[str, FieldCheck]]] = {
    # type: (required fields, checks of the fields that may be present)
    "meta": (
        ("format",),
        {"format": lambda v: v == FORMAT_ID, "provider": _is_provider, "agent": _is_text},
    ),
    "request": (
        ("call_id", "ts", "body"),
        {
            "call_id": _is_id,
            "ts": _is_ts,
            "body": lambda v: type(v) is dict,
            "provider": _is_provider,
            "loop_id": _is_id,
            "loop_label": _is_text,
            "parent_tool_call_id": _is_id,
        },
    ),
    "response": (
        ("call_id", "ts"),
        {
            "call_id": _is_id,
            "ts": _is_ts,
            "body": lambda v: v is None or type(v) in (dict, str),
            "provider": _is_provider,
            "status": _is_status,
            "error": _is_text,
        },
    ),
    "tool_start": (
        ("tool_call_id", "ts"),
        {"tool_call_id": _is_id, "ts": _is_ts, "name": _is_text},
    ),
    "tool_end": (
        ("tool_call_id", "ts"),
        {
            "tool_call_id": _is_id,
            "ts": _is_ts,
            "name": _is_text,
            "is_error": lambda v: type(v) is bool,
        },
    ),
}


def plainly_valid(value: Any) -> bool:
    """A quick check that accepts only lines the schema accepts (and most real lines)."""
    if type(value) is not dict or type(value.get("type")) is not str:
        return False
    shape = PLAIN_SHAPES.get(value["type"])
    if shape is None:
        return False
    required, checks = shape
    if any(name not in value for name in required):
        return False
    if value["type"] == "response" and "body" not in value and "error" not in value:
        return False
    return all(check(value[name]) for name, check in checks.items() if name in value)


@dataclass(frozen=True, slots=True)
class _Request:
    line: int
    event: dict[str, Any]


@register
class LoopInspectorAdapter(Adapter):
    name = "loop-inspector"
    label = "Loop Inspector event log"
    where = (
        "Written by your own agent loop: one JSON line per model request, response and tool "
        "start/end (see docs/event-format.md); can be tailed live while the agent runs."
    )
    normalize = staticmethod(anthropic.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._pending: dict[str, _Request] = {}
        """Requests waiting for their response, by call_id, in arrival order."""
        self._meta: dict[str, Any] = {}
        self._meta_shown = False
        self._readers: dict[str, Adapter | None] = {}
        self._tool_started: dict[str, ToolTiming] = {}
        self._last_provider = DEFAULT_PROVIDER

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        problem = schema_problem(record.value)
        if problem is not None:
            yield LineError(record.line, problem)
            return
        event: dict[str, Any] = record.value
        kind = event["type"]
        if kind == "meta":
            self._meta = event
        elif kind == "request":
            yield from self._request(record.line, event)
        elif kind == "response":
            request = self._pending.pop(event["call_id"], None)
            yield from self._call(request, record.line, event)
        elif kind == "tool_start":
            yield self._tool_start(record.line, event)
        else:
            yield self._tool_end(record.line, event)

    def close(self) -> Iterator[AdapterEvent]:
        pending, self._pending = self._pending, {}
        for request in pending.values():
            yield from self._call(request, None, None)

    # -- model calls ------------------------------------------------------------------
    def _request(self, line: int, event: dict[str, Any]) -> Iterator[AdapterEvent]:
        earlier = self._pending.pop(event["call_id"], None)
        if earlier is not None:
            # The same call_id again before any response: the first call never returned.
            yield from self._call(earlier, None, None)
        self._pending[event["call_id"]] = _Request(line, event)

    def _call(
        self, request: _Request | None, line: int | None, response: dict[str, Any] | None
    ) -> Iterator[AdapterEvent]:
        """One Exchange from a request and/or its response, read by the provider's adapter."""
        request_event = request.event if request is not None else {}
        response_event = response or {}
        at_line = request.line if request is not None else (line or 0)
        provider = _provider(request_event, response_event, self._meta, self._last_provider)
        self._last_provider = provider
        reader = self._reader(provider)
        if reader is None:
            yield LineError(
                at_line,
                f"call {(request_event or response_event).get('call_id')!r}: {provider} bodies "
                f"cannot be read, the {PROVIDER_ADAPTERS[provider]} adapter is not installed",
            )
            return
        pair = {"response": _response_record(response)}
        if request is not None:
            pair["request"] = request_event["body"]
        for item in reader.feed(Record(at_line, pair)):
            if isinstance(item, Exchange):
                yield self._finish(item, at_line, provider, request_event, response_event)
            elif isinstance(item, LineError):
                yield LineError(item.line, f"{provider} body: {item.message}")
            else:
                yield item

    def _finish(
        self,
        exchange: Exchange,
        line: int,
        provider: str,
        request: dict[str, Any],
        response: dict[str, Any],
    ) -> Exchange:
        """Our event fields on top of what the provider adapter read from the bodies."""
        extra: dict[str, Any] = {**exchange.extra, "provider": provider}
        extra["call_id"] = request.get("call_id") or response.get("call_id")
        for name, event, known in (
            ("request_event", request, REQUEST_FIELDS),
            ("response_event", response, RESPONSE_FIELDS),
        ):
            unknown = {k: v for k, v in event.items() if k not in known}
            if unknown:
                extra[name] = unknown
        if self._meta and not self._meta_shown:
            extra["meta"] = self._meta
            self._meta_shown = True
        status, error = exchange.status, exchange.error
        if not response:
            status, error = "error", NO_RESPONSE
        elif isinstance(response.get("error"), str):
            logged = response["error"]
            body_error = exchange.error if response.get("body") is not None else None
            status = "error"
            error = f"{logged} ({body_error})" if body_error else logged
        return replace(
            exchange,
            line=line,
            started_at=to_epoch_seconds(request.get("ts")),
            ended_at=to_epoch_seconds(response.get("ts")),
            status=status,
            error=error,
            extra=extra,
            loop_key=request.get("loop_id"),
            loop_label=request.get("loop_label") or request.get("loop_id"),
            parent_tool_id=request.get("parent_tool_call_id"),
        )

    def _reader(self, provider: str) -> Adapter | None:
        """The pair adapter for a provider, made on first use (None when not installed)."""
        if provider not in self._readers:
            try:
                adapter = get_adapter(PROVIDER_ADAPTERS[provider])
            except KeyError:
                self._readers[provider] = None
            else:
                self._readers[provider] = adapter(self.source_name)
        return self._readers[provider]

    # -- tool runs --------------------------------------------------------------------
    def _tool_start(self, line: int, event: dict[str, Any]) -> ToolTiming:
        timing = ToolTiming(
            line, event["tool_call_id"], event.get("name"), started_at=to_epoch_seconds(event["ts"])
        )
        self._tool_started[timing.tool_id] = timing
        return timing

    def _tool_end(self, line: int, event: dict[str, Any]) -> ToolTiming:
        # Repeat the start's time and name: a timing that arrives before its tool call
        # is known is kept whole, and only the latest one per id is kept.
        start = self._tool_started.pop(event["tool_call_id"], None)
        return ToolTiming(
            line,
            event["tool_call_id"],
            event.get("name") or (start.name if start else None),
            started_at=start.started_at if start else None,
            ended_at=to_epoch_seconds(event["ts"]),
            is_error=event.get("is_error"),
        )


def _response_record(response: dict[str, Any] | None) -> Any:
    """The response in the shape pair adapters read: a bare body, or an HTTP record when
    there is a status or raw event-stream text."""
    if response is None or "body" not in response or response["body"] is None:
        return None
    body = response["body"]
    status = response.get("status")
    if isinstance(body, str):
        return {"status_code": status, "headers": {}, "body": None, "body_raw": body}
    if status is not None:
        return {"status_code": status, "headers": {}, "body": body}
    return body


def _provider(
    request: dict[str, Any], response: dict[str, Any], meta: dict[str, Any], previous: str
) -> str:
    """The provider named by the response, the request or the meta line; else the one
    the bodies show; else the previous call's (one log rarely mixes providers)."""
    for source in (response, request, meta):
        provider = source.get("provider")
        if isinstance(provider, str) and provider in PROVIDER_ADAPTERS:
            return provider
    return _guess_provider(request.get("body"), response.get("body")) or previous


def _guess_provider(request_body: Any, response_body: Any) -> str | None:
    """The provider whose shapes the bodies show, or None when they could be any."""
    if isinstance(response_body, dict):
        kind = str(response_body.get("object") or "")
        if kind == "response":
            return "openai-responses"
        if kind.startswith("chat.completion") or "choices" in response_body:
            return "openai-chat"
        if response_body.get("type") in ("message", "error"):
            return "anthropic"
    if not isinstance(request_body, dict):
        return None
    messages = request_body.get("messages")
    if not isinstance(messages, list):
        has_input = "input" in request_body or "instructions" in request_body
        return "openai-responses" if has_input else None
    if "system" in request_body:
        return "anthropic"
    for message in messages:
        if isinstance(message, dict):
            if message.get("role") in OPENAI_ONLY_ROLES or "tool_calls" in message:
                return "openai-chat"
            if isinstance(message.get("content"), list) and any(
                isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                for b in message["content"]
            ):
                return "anthropic"
    return None
