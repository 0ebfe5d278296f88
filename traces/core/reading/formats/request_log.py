"""The adapter every request-log format shares: one record is one recorded model call.

A request-log format (Anthropic Messages, OpenAI Chat and Responses, Gemini, Bedrock
Converse, and those still to come) is this class plus detection and its dialect: the
records are read by `http_record`, the bodies by the format's `dialects` module, and the
format only says how it is recognised, where its request keeps the transcript, the system
prompt, the tools and the model, and which fields of its bodies are worth keeping in
`extra`. Records that are not model calls (MCP, telemetry, token requests) become
`HttpTraffic` through `http_traffic`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from traces.core.records import dataclass

from ...model import Exchange, LineError, Pairing
from ..dialects.base import Dialect
from ..records import Record
from ..timeparse import to_epoch_seconds
from ._index import best_claim
from .base import Adapter, AdapterEvent, Detection
from .http_record import (
    Outcome,
    RequestRead,
    is_nock,
    nock_response,
    other_keys,
    read_outcome,
    read_request,
)
from .http_traffic import TrafficReader

NO_REQUEST = RequestRead(None, {}, "", None)
"""What a response-only record sent: nothing that was recorded."""


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One model call as a request log recorded it, read but not yet made an `Exchange`."""

    line: int
    value: dict[str, Any]
    """The record around the request and response (its other keys go to `extra`)."""
    request_recorded: bool
    sent: RequestRead
    body: dict[str, Any]
    """The request body ({} when only a response was recorded)."""
    messages: Sequence[Any]
    """The request's transcript, as the dialect's raw messages."""
    outcome: Outcome

    @property
    def reply_body(self) -> dict[str, Any]:
        """The successful response body, or {}."""
        body = self.outcome.body
        return body if isinstance(body, dict) else {}


class RequestLogAdapter(Adapter):
    """Reads records that each hold one recorded HTTP exchange (or only its response).

    Subclasses set `dialect` and say how their records look; every hook below has a
    default that fits most vendor APIs.
    """

    dialect: ClassVar[Dialect]
    """The vendor's API shapes (a `dialects` module)."""
    mapped_request_keys: ClassVar[frozenset[str]] = frozenset()
    """Request-body keys the `Exchange` already holds; the others are kept in `extra`."""
    not_a_record: ClassVar[str] = "not a record of this format"
    """The error for a record that is none of the shapes read."""
    reads_nock: ClassVar[bool] = True
    """Whether a nock recording `{status, headers, body}` is read as a response."""
    nock_fields_in_extra: ClassVar[bool] = True
    """Whether a nock's own fields also go to `extra` (they are in `http_response` too)."""
    tool_pairing: ClassVar[Pairing | None] = None
    """How tool results are paired when the API gives calls no id (Gemini)."""

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._traffic = TrafficReader(self.is_model_request)

    # -- detection -------------------------------------------------------------------------
    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return best_claim(cls.recognise, values)

    @classmethod
    def recognise(cls, value: Any) -> Detection | None:
        """How sure we are that one record is a call of this API, and why."""
        raise NotImplementedError

    @staticmethod
    def is_model_request(url: str, body: Any) -> bool:
        """Whether a recorded request to `url` with `body` is a model turn of this API
        (and not MCP, telemetry, token counting...)."""
        raise NotImplementedError

    @staticmethod
    def is_response(value: Any) -> bool:
        """Whether a record is a bare response body, logged without its request."""
        return False

    # -- reading ---------------------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not isinstance(value, dict):
            yield LineError(record.line, "expected a JSON object with request and response")
        elif (traffic := self._traffic.read(record.line, value)) is not None:
            yield traffic
        elif "request" in value or "response" in value:
            yield from self.pair(record.line, value, value.get("request"), value.get("response"))
        elif self.reads_nock and is_nock(value):
            fields = value if self.nock_fields_in_extra else {}
            yield from self.pair(record.line, fields, None, nock_response(value))
        elif self.is_response(value):
            yield from self.pair(record.line, {}, None, value)
        else:
            yield LineError(record.line, self.not_a_record)

    def pair(
        self, line: int, value: dict[str, Any], request: Any, response: Any
    ) -> Iterator[AdapterEvent]:
        """One request (None when not recorded) and its response, as one call."""
        sent = read_request(request)
        if request is not None and not isinstance(sent.body, dict):
            yield LineError(line, "the request body is not a JSON object")
            return
        body = sent.body if isinstance(sent.body, dict) else {}
        messages = self.transcript(body)
        if isinstance(messages, str):
            yield LineError(line, messages)
            return
        outcome = read_outcome(response, self.dialect)
        yield self.exchange(
            RecordedCall(line, value, request is not None, sent, body, messages, outcome)
        )

    def response_only(self, line: int, outcome: Outcome) -> Exchange:
        """A response rebuilt from stream pieces logged one per record."""
        return self.exchange(RecordedCall(line, {}, False, NO_REQUEST, {}, [], outcome))

    def transcript(self, body: dict[str, Any]) -> Sequence[Any] | str:
        """The request's messages, or why they cannot be read."""
        messages = body.get("messages")
        if messages is not None and not isinstance(messages, list):
            return "request 'messages' is not a list"
        return messages or []

    # -- the exchange ----------------------------------------------------------------------
    def exchange(self, call: RecordedCall) -> Exchange:
        """The call as an `Exchange` (a format whose transcript depends on earlier calls,
        as the Responses API's server-kept history, rebuilds it here)."""
        return self.build(call, self.extra(call))

    def build(self, call: RecordedCall, extra: dict[str, Any]) -> Exchange:
        """The `Exchange` of a call, with the `extra` the format made for it."""
        outcome = call.outcome
        reply_body = outcome.body if isinstance(outcome.body, dict) else None
        reply = (
            self.dialect.read_response(reply_body, call.messages)
            if reply_body is not None
            else None
        )
        started, ended = self.times(call)
        return Exchange(
            line=call.line,
            messages=call.messages,
            normalize=self.normalizer_for(call.messages),
            system=self.system(call),
            tools=self.tools(call.body),
            model=self.model(call),
            response=reply.message if reply else None,
            response_raw=outcome.body if outcome.body is not None else outcome.failed_body,
            stop_reason=reply.stop_reason if reply else None,
            usage=reply.usage if reply else None,
            started_at=started,
            ended_at=ended,
            status="error" if outcome.error else "ok",
            http_status=outcome.read.http_status,
            error=outcome.error,
            request_recorded=call.request_recorded,
            extra=extra,
            tool_pairing=self.tool_pairing or {},
        )

    def system(self, call: RecordedCall) -> Any:
        """The system prompt as the request sent it."""
        return call.body.get("system")

    def tools(self, body: dict[str, Any]) -> list[Any]:
        """The tools the request offered, one entry a tool."""
        tools = body.get("tools")
        return tools if isinstance(tools, list) else []

    def model(self, call: RecordedCall) -> str | None:
        """The model that answered, else the one asked for."""
        model = call.reply_body.get("model") or call.body.get("model")
        return model if isinstance(model, str) else None

    def times(self, call: RecordedCall) -> tuple[float | None, float | None]:
        """When the request was sent and the response ended, as recorded."""
        started = call.sent.timestamp or call.value.get("started_at")
        ended = call.outcome.read.timestamp or call.value.get("ended_at")
        return to_epoch_seconds(started), to_epoch_seconds(ended)

    def extra(self, call: RecordedCall) -> dict[str, Any]:
        """What the record holds beyond the `Exchange`: unmapped request keys, the HTTP
        envelopes, the record's other fields. Formats add their response fields."""
        return {
            "request": {k: v for k, v in call.body.items() if k not in self.mapped_request_keys},
            **call.sent.meta,
            **call.outcome.read.meta,
            **other_keys(call.value),
        }
