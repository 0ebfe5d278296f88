"""OpenAI Responses API request logs: one request/response pair per record.

Shapes read (the envelopes of every request log, see `http_record`):
`{"request": BODY, "response": BODY}` lines, HTTP pairs from proxies and VCR cassettes
(streamed responses stay raw `response.*` server-sent events), and response-only
records: a `response` object, a nock recording, or `response.*` events one per line.

The Responses API can keep the conversation on the server: a request that names
`previous_response_id` (or a `conversation`) sends only its new input items. When the
named response is in the same file, the transcript the model really saw is rebuilt as
that request's transcript + that response's output items + the new input, so the loop
and its tool calls (paired by `call_id`) read like a stateless one. `extra` records how
many items were inherited and which previous response could not be found.

A request with `generate: false` (the Codex CLI's warm-up before each turn over the
WebSocket mode) has the server take its input in and generate nothing: it is kept as
the turn a later request continues, and shown as other traffic, never as a model call
(no tokens billed, no prefix to compare).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from traces.core.records import dataclass, replace

from ...coerce import dict_or_empty, list_or_empty
from ...model import Exchange, HttpTraffic
from ..credentials import mask_url
from ..dialects import openai_responses as responses
from ..dialects.base import Dialect
from ..records import Record
from ..timeparse import to_epoch_seconds
from ._index import openai_responses as scoring
from ._index.openai_responses import _is_response_object
from .base import AdapterEvent, Detection
from .http_record import Outcome, stream_outcome
from .registry import register
from .request_log import RecordedCall, RequestLogAdapter


@dataclass(frozen=True, slots=True)
class _Turn:
    """One call's contribution to a server-kept conversation: its input, then its output.

    Turns link to their parent instead of copying the transcript, so memory stays
    linear in the number of items however long the chain grows.
    """

    parent: _Turn | None
    items: tuple[Any, ...]


def _transcript(turn: _Turn | None) -> list[Any]:
    chain: list[tuple[Any, ...]] = []
    while turn is not None:
        chain.append(turn.items)
        turn = turn.parent
    transcript: list[Any] = []
    for items in reversed(chain):
        transcript.extend(items)
    return transcript


@register
class OpenAIResponsesAdapter(RequestLogAdapter):
    name = "openai-responses"
    label = "OpenAI Responses API request log"
    where = (
        "Written by an HTTP logging proxy, a VCR cassette of /v1/responses traffic, or your "
        "own code that logs each Responses API request and response as one line."
    )
    dialect: ClassVar[Dialect] = responses
    normalize = staticmethod(responses.normalize_item)
    mapped_request_keys = frozenset({"model", "input", "instructions", "tools"})
    not_a_record = "not a Responses API record (no 'request', 'response' or response object)"

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._turns: dict[str, _Turn] = {}
        self._conversations: dict[str, _Turn] = {}
        self._events: list[Any] = []
        self._events_line = 0

    @classmethod
    def recognise(cls, value: Any) -> Detection | None:
        return scoring.recognise(value)

    @staticmethod
    def is_model_request(url: str, body: Any) -> bool:
        """A Responses API call: its endpoint, or (behind a proxy) a body with `input`."""
        if "/responses" in url.split("?")[0]:
            return True
        return isinstance(body, dict) and "input" in body

    @staticmethod
    def is_response(value: Any) -> bool:
        return _is_response_object(value)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if responses.is_stream_event(value):
            if not self._events:
                self._events_line = record.line
            self._events.append(value)
            if value.get("type") in responses.TERMINAL_EVENTS:
                yield from self._flush_events()
            return
        yield from self._flush_events()
        yield from super().feed(record)

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._flush_events()

    def _flush_events(self) -> Iterator[AdapterEvent]:
        """Events logged one per line form one streamed response, without its request."""
        if not self._events:
            return
        events, self._events = self._events, []
        body, error = responses.assemble_events(events)
        yield self.response_only(self._events_line, stream_outcome(body, error, responses))

    def pair(
        self, line: int, value: dict[str, Any], request: Any, response: Any
    ) -> Iterator[AdapterEvent]:
        """As every request log; a warm-up (`generate: false`) becomes other traffic
        once `exchange` has kept its turn."""
        for event in super().pair(line, value, request, response):
            if isinstance(event, Exchange) and event.extra.get("warm_up"):
                yield _warm_up(line, request, event)
            else:
                yield event

    def transcript(self, body: dict[str, Any]) -> Sequence[Any] | str:
        """The request's own input items (`exchange` prepends a server-kept history)."""
        if not isinstance(body.get("input"), (str, list, type(None))):
            return "request 'input' is neither a string nor a list of items"
        return responses.input_items(body.get("input"))

    def exchange(self, call: RecordedCall) -> Exchange:
        own_items = list(call.messages)
        extra = self.extra(call)
        parent = self._parent_turn(call.body, call.reply_body, extra)
        messages = own_items if parent is None else [*_transcript(parent), *own_items]
        if parent is not None:
            extra["inherited_items"] = len(messages) - len(own_items)
        if call.body.get("generate") is False:
            extra["warm_up"] = True
        self._remember(call.body, call.reply_body, parent, own_items, call.outcome)
        return self.build(replace(call, messages=messages), extra)

    def system(self, call: RecordedCall) -> Any:
        return responses.system_of(call.body.get("instructions"), call.messages)

    def times(self, call: RecordedCall) -> tuple[float | None, float | None]:
        reply = call.reply_body
        return (
            _time(call.sent.timestamp, call.value.get("started_at"), reply.get("created_at")),
            _time(
                call.outcome.read.timestamp, call.value.get("ended_at"), reply.get("completed_at")
            ),
        )

    def extra(self, call: RecordedCall) -> dict[str, Any]:
        extra = super().extra(call)
        reply = call.reply_body
        for key in ("id", "status", "incomplete_details", "service_tier"):
            if reply.get(key) is not None:
                extra[f"response_{key}"] = reply[key]
        usage = dict_or_empty(reply.get("usage"))
        details = usage.get("output_tokens_details")
        if isinstance(details, dict) and details.get("reasoning_tokens"):
            extra["reasoning_tokens"] = details["reasoning_tokens"]
        if call.outcome.streamed:
            extra["streamed"] = True
        return extra

    def _parent_turn(
        self, body: dict[str, Any], reply_body: dict[str, Any], extra: dict[str, Any]
    ) -> _Turn | None:
        """The server-kept history this request continues, when this file holds it."""
        previous = body.get("previous_response_id") or reply_body.get("previous_response_id")
        if isinstance(previous, str) and previous:
            extra["previous_response_id"] = previous
            turn = self._turns.get(previous)
            if turn is None:
                extra["previous_response_missing"] = True
            return turn
        conversation = _conversation_id(body) or _conversation_id(reply_body)
        if conversation is not None:
            extra["conversation"] = conversation
            return self._conversations.get(conversation)
        return None

    def _remember(
        self,
        body: dict[str, Any],
        reply_body: dict[str, Any],
        parent: _Turn | None,
        own_items: list[Any],
        outcome: Outcome,
    ) -> None:
        """Keep this call's turn so a later `previous_response_id` can continue it."""
        if outcome.error or not reply_body:
            return
        output = list_or_empty(reply_body.get("output"))
        turn = _Turn(parent, (*own_items, *output))
        response_id = reply_body.get("id")
        if isinstance(response_id, str) and response_id:
            self._turns[response_id] = turn
        conversation = _conversation_id(body) or _conversation_id(reply_body)
        if conversation is not None:
            self._conversations[conversation] = turn


def _warm_up(line: int, request: Any, exchange: Exchange) -> HttpTraffic:
    sent = request if isinstance(request, dict) else {}
    url = mask_url(str(sent.get("url") or sent.get("uri") or ""))
    method = sent.get("method")
    status = exchange.http_status
    summary = (
        f"Responses warm-up (generate: false) of {exchange.model or 'a model'}: no output, "
        "not a model call" + (f" → {status}" if status else "")
    )
    return HttpTraffic(
        line, "other", method if isinstance(method, str) else None, url, status, summary
    )


def _conversation_id(body: dict[str, Any]) -> str | None:
    conversation = body.get("conversation")
    if isinstance(conversation, dict):
        conversation = conversation.get("id")
    return conversation if isinstance(conversation, str) and conversation else None


def _time(*candidates: Any) -> float | None:
    for candidate in candidates:
        moment = to_epoch_seconds(candidate)
        if moment is not None:
            return moment
    return None
