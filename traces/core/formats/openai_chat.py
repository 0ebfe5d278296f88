"""OpenAI Chat Completions request logs: one request/response pair per record.

Shapes read:
- `{"request": BODY, "response": BODY}`, the simplest logger's output;
- HTTP pairs `{"request": {url, method, headers, body}, "response": {status_code,
  headers, body | null, body_raw}}` as claude-trace-like proxies write them and as VCR
  YAML cassettes become in `records` (streamed responses stay raw SSE text);
- response-only records: a `chat.completion` object, a nock recording `{status, headers,
  body}`, or `chat.completion.chunk` objects one per line (joined back by id).

Each record is one call; the request's `messages` hold the whole transcript, so loops
are grouped by transcript prefix. The HTTP-pair reading below is shared with the
Responses API adapter (`openai_responses`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from ..credentials import mask_headers, mask_url
from ..dialects import openai_chat as chat
from ..http_traffic import TrafficReader
from ..model import Exchange, LineError
from ..records import Record
from ..timeparse import to_epoch_seconds
from .base import Adapter, AdapterEvent, Detection
from .registry import register

MAPPED_REQUEST_KEYS = {"model", "messages", "tools"}
PAIR_KEYS = ("request", "response")


# -- HTTP pairs (shared with the Responses adapter) -------------------------------------
@dataclass(frozen=True, slots=True)
class RequestRead:
    """A request that is either a bare body or an HTTP record around one."""

    body: Any
    meta: dict[str, Any]
    url: str
    timestamp: Any


@dataclass(slots=True)
class ResponseRead:
    """What one recorded response holds, before any dialect reads its body.

    `stream_text` is set for a server-sent event stream; `problem` says why no body
    could be read at all.
    """

    body: Any = None
    stream_text: str | None = None
    http_status: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    timestamp: Any = None
    problem: str | None = None
    raw_text: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """A response read through a dialect: the body to keep and whether the call failed."""

    body: Any
    error: str | None
    failed_body: Any
    read: ResponseRead
    streamed: bool


def read_request(request: Any) -> RequestRead:
    """(body, masked metadata, URL, timestamp) of a bare body or an HTTP request record."""
    if not isinstance(request, dict) or not _is_http_request(request):
        return RequestRead(request, {}, "", None)
    body = request.get("body")
    if isinstance(body, (str, bytes)):
        with contextlib.suppress(orjson.JSONDecodeError):
            body = orjson.loads(body)
    meta = {k: v for k, v in request.items() if k != "body"}
    if isinstance(meta.get("headers"), dict):
        meta["headers"] = mask_headers(meta["headers"])
    for key in ("url", "uri"):
        if isinstance(meta.get(key), str):
            meta[key] = mask_url(meta[key])
    url = str(request.get("url") or request.get("uri") or "")
    return RequestRead(body, {"http_request": meta}, url, request.get("timestamp"))


def _is_http_request(request: dict[str, Any]) -> bool:
    return "body" in request and any(k in request for k in ("url", "uri", "method", "headers"))


def request_url(value: Any) -> str:
    """The URL of a record's request, or ''."""
    request = value.get("request") if isinstance(value, dict) else None
    if not isinstance(request, dict):
        return ""
    return str(request.get("url") or request.get("uri") or "")


def read_http_response(response: Any) -> ResponseRead:
    """Unwrap a response recorded as a bare body, an HTTP record or raw text."""
    if response is None:
        return ResponseRead(problem="no response was recorded (the request failed or was cut off)")
    if isinstance(response, (str, list)):
        read = ResponseRead()
        _take_body(read, response)
        return read
    if not isinstance(response, dict):
        return ResponseRead(problem="the response is not a JSON object")
    if not _is_http_response(response):
        return ResponseRead(body=response)
    status = response.get("status_code", response.get("status"))
    read = ResponseRead(http_status=status if isinstance(status, int) else None)
    meta = {k: v for k, v in response.items() if k not in ("body", "body_raw")}
    if isinstance(meta.get("headers"), dict):
        meta["headers"] = mask_headers(meta["headers"])
    read.meta = {"http_response": meta}
    read.timestamp = response.get("timestamp")
    body = response.get("body")
    if body is None and isinstance(response.get("body_raw"), str):
        body = response["body_raw"]
    _take_body(read, body)
    return read


def _is_http_response(response: dict[str, Any]) -> bool:
    if "status_code" in response or "body_raw" in response:
        return True
    return "body" in response and ("headers" in response or "status" in response)


def _take_body(read: ResponseRead, body: Any) -> None:
    """Parse a body that may be JSON text, an event stream or already parsed."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str):
        read.body = body
        return
    if is_event_stream(body):
        read.stream_text = body
        return
    try:
        read.body = orjson.loads(body)
    except orjson.JSONDecodeError:
        read.problem = "the response body is neither JSON nor an event stream"
        read.raw_text = body[:2000]


def is_event_stream(text: str) -> bool:
    """A recorded `text/event-stream` body (it starts with `data:` or `event:` lines)."""
    start = text[:256].lstrip()
    return start.startswith(("data:", "event:")) or "\ndata:" in text[:4096]


def settle_outcome(
    read: ResponseRead,
    assemble: Callable[[str], tuple[Any, str | None]],
    error_text: Callable[[Any], str | None],
) -> Outcome:
    """Apply a dialect to a response: rebuild streams, find API errors and HTTP failures.

    A failed call keeps its error body in `failed_body` and has no response body; a
    stream cut short keeps what arrived and is still marked failed.
    """
    body = read.body
    error = read.problem
    streamed = read.stream_text is not None
    if read.stream_text is not None:
        body, error = assemble(read.stream_text)
    api_error = error_text(body)
    status = read.http_status
    failed_body = None
    if api_error:
        error = f"HTTP {status} {api_error}" if status is not None and status >= 400 else api_error
        failed_body, body = body, None
    elif status is not None and status >= 400:
        error = f"HTTP {status}"
        failed_body, body = body if body is not None else read.raw_text, None
    elif body is not None and not isinstance(body, dict):
        error = "the response body is not a JSON object"
        failed_body, body = body, None
    elif body is None and read.raw_text is not None:
        failed_body = read.raw_text
    return Outcome(body, error, failed_body, read, streamed)


def other_keys(value: dict[str, Any]) -> dict[str, Any]:
    """Record fields beside request/response (logged_at, ids…), kept for display."""
    return {k: v for k, v in value.items() if k not in PAIR_KEYS}


def nock_response(value: dict[str, Any]) -> dict[str, Any]:
    """A nock recording `{status, headers, body}` as an HTTP response record."""
    return {
        "status_code": value.get("status"),
        "headers": value.get("headers"),
        "body": value.get("body"),
    }


def is_nock(value: Any) -> bool:
    return isinstance(value, dict) and "status" in value and "body" in value


def compact_text(value: Any, limit: int = 65536) -> str:
    """A body's text without spaces, for cheap substring sniffing."""
    if isinstance(value, (dict, list)):
        try:
            value = orjson.dumps(value)[:limit].decode("utf-8", "replace")
        except TypeError:
            return ""
    if not isinstance(value, str):
        return ""
    return value[:limit].replace(" ", "").replace("\n", "")


# -- the adapter ------------------------------------------------------------------------
@register
class OpenAIChatAdapter(Adapter):
    name = "openai-chat"
    label = "OpenAI Chat Completions request log"
    where = (
        "Written by an HTTP logging proxy, a VCR cassette of /v1/chat/completions traffic, "
        "or your own code that logs each Chat Completions request and response as one line "
        "(any OpenAI-compatible server: vLLM, Ollama, OpenRouter, LiteLLM…)."
    )
    normalize = staticmethod(chat.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._chunks: list[Any] = []
        self._chunk_line = 0
        self._chunk_id: Any = None
        self._traffic = TrafficReader(_is_chat_request)

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        best: Detection | None = None
        for value in values:
            claim = _recognise(value)
            if claim is not None and (best is None or claim.score > best.score):
                best = claim
        return best

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if chat.is_chunk(value):
            if self._chunks and value.get("id") != self._chunk_id:
                yield from self._flush_chunks()
            if not self._chunks:
                self._chunk_line, self._chunk_id = record.line, value.get("id")
            self._chunks.append(value)
            return
        yield from self._flush_chunks()
        if not isinstance(value, dict):
            yield LineError(record.line, "expected a JSON object with request and response")
        elif (traffic := self._traffic.read(record.line, value)) is not None:
            yield traffic
        elif "request" in value or "response" in value:
            yield from self._pair(record.line, value, value.get("request"), value.get("response"))
        elif is_nock(value):
            yield from self._pair(record.line, value, None, nock_response(value))
        elif _is_completion(value):
            yield from self._pair(record.line, {}, None, value)
        else:
            yield LineError(
                record.line,
                "not a Chat Completions record (no 'request', 'response' or completion object)",
            )

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._flush_chunks()

    def _flush_chunks(self) -> Iterator[AdapterEvent]:
        """Chunks logged one per line form one streamed response, without its request."""
        if not self._chunks:
            return
        chunks, self._chunks = self._chunks, []
        body, error = chat.assemble_chunks(chunks)
        read = ResponseRead(body=body, problem=error)
        outcome = replace(
            settle_outcome(read, chat.assemble_stream, chat.error_text), streamed=True
        )
        yield self._exchange(self._chunk_line, {}, None, RequestRead(None, {}, "", None), outcome)

    def _pair(
        self, line: int, value: dict[str, Any], request: Any, response: Any
    ) -> Iterator[AdapterEvent]:
        sent = read_request(request)
        if request is not None and not isinstance(sent.body, dict):
            yield LineError(line, "the request body is not a JSON object")
            return
        body = sent.body if isinstance(sent.body, dict) else {}
        if body.get("messages") is not None and not isinstance(body.get("messages"), list):
            yield LineError(line, "request 'messages' is not a list")
            return
        read = read_http_response(response)
        chunk_list = _chunk_list(read.body)
        if chunk_list is not None:
            read.body, read.problem = chat.assemble_chunks(chunk_list)
        outcome = settle_outcome(read, chat.assemble_stream, chat.error_text)
        if chunk_list is not None:
            outcome = replace(outcome, streamed=True)
        yield self._exchange(line, value, request, sent, outcome)

    def _exchange(
        self,
        line: int,
        value: dict[str, Any],
        request: Any,
        sent: RequestRead,
        outcome: Outcome,
    ) -> Exchange:
        body = sent.body if isinstance(sent.body, dict) else {}
        messages = body.get("messages") or []
        tools = body.get("tools")
        reply = chat.read_response(outcome.body) if isinstance(outcome.body, dict) else None
        return Exchange(
            line=line,
            messages=messages,
            normalize=self.normalize,
            system=chat.system_of(messages),
            tools=tools if isinstance(tools, list) else [],
            model=_model(body, outcome.body),
            response=reply.message if reply else None,
            response_raw=outcome.body if outcome.body is not None else outcome.failed_body,
            stop_reason=reply.stop_reason if reply else None,
            usage=reply.usage if reply else None,
            started_at=_started(sent, value, outcome.body),
            ended_at=to_epoch_seconds(outcome.read.timestamp or value.get("ended_at")),
            status="error" if outcome.error else "ok",
            http_status=outcome.read.http_status,
            error=outcome.error,
            request_recorded=request is not None,
            extra=_extra(value, body, sent, outcome),
        )


def _recognise(value: Any) -> Detection | None:
    """How sure we are that this record is a Chat Completions call, and why."""
    if not isinstance(value, dict):
        return None
    if chat.is_chunk(value) or _is_completion(value):
        return Detection(0.9, "a Chat Completions response object (choices[], chat.completion)")
    if is_nock(value) and '"object":"chat.completion' in compact_text(value.get("body")):
        return Detection(0.92, "a recorded HTTP response holding a Chat Completions body")
    url = request_url(value)
    if "/chat/completions" in url:
        return Detection(0.9, f"request URL {url.split('?')[0]} is the Chat Completions endpoint")
    if url and ("/responses" in url or "/v1/messages" in url):
        return None
    request = value.get("request")
    if not isinstance(request, dict):
        return None
    body = read_request(request).body
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    if _chat_response(value.get("response")):
        return Detection(0.9, "request has 'messages' and the response has 'choices'")
    if any(_chat_only_message(m) for m in body["messages"]):
        return Detection(0.6, "request 'messages' use Chat roles (system/tool) or tool_calls")
    return Detection(0.4, "request has 'messages' (no response shape to confirm)")


def _is_chat_request(url: str, body: Any) -> bool:
    """A Chat Completions call: its endpoint, or (behind a proxy) a body with messages."""
    if "/chat/completions" in url:
        return True
    return isinstance(body, dict) and isinstance(body.get("messages"), list)


def _is_completion(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if str(value.get("object") or "").startswith("chat.completion"):
        return True
    choices = value.get("choices")
    return (
        isinstance(choices, list)
        and bool(choices)
        and isinstance(choices[0], dict)
        and ("message" in choices[0] or "delta" in choices[0])
    )


def _chat_response(response: Any) -> bool:
    if _is_completion(response):
        return True
    if isinstance(response, list):
        return bool(response) and chat.is_chunk(response[0])
    if not isinstance(response, dict):
        return False
    body = response.get("body") if response.get("body") is not None else response.get("body_raw")
    if _is_completion(body):
        return True
    text = compact_text(body, 4096)
    return '"object":"chat.completion' in text


def _chat_only_message(message: Any) -> bool:
    """Roles and fields the Anthropic Messages API does not have."""
    if not isinstance(message, dict):
        return False
    return message.get("role") in ("system", "developer", "tool") or "tool_calls" in message


def _chunk_list(body: Any) -> list[Any] | None:
    """A response logged as the list of its stream chunks."""
    if isinstance(body, list) and body and chat.is_chunk(body[0]):
        return body
    return None


def _model(request_body: dict[str, Any], body: Any) -> str | None:
    model = body.get("model") if isinstance(body, dict) else None
    model = model or request_body.get("model")
    return model if isinstance(model, str) else None


def _started(sent: RequestRead, value: dict[str, Any], body: Any) -> float | None:
    """The request's own timestamp; else the completion's `created` (whole seconds)."""
    started = sent.timestamp or value.get("started_at") or value.get("timestamp")
    if started is None and isinstance(body, dict):
        started = body.get("created")
    return to_epoch_seconds(started)


def _extra(
    value: dict[str, Any], body: dict[str, Any], sent: RequestRead, outcome: Outcome
) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "request": {k: v for k, v in body.items() if k not in MAPPED_REQUEST_KEYS},
        **sent.meta,
        **outcome.read.meta,
        **other_keys(value),
    }
    reply = outcome.body if isinstance(outcome.body, dict) else {}
    finish_reason = chat.finish_reason_of(reply)
    if finish_reason is not None:
        extra["finish_reason"] = finish_reason
    if outcome.streamed:
        extra["streamed"] = True
    choices = reply.get("choices")
    if isinstance(choices, list) and len(choices) > 1:
        extra["choices"] = len(choices)
    for key in ("id", "system_fingerprint", "service_tier"):
        if reply.get(key) is not None:
            extra[f"response_{key}"] = reply[key]
    return extra
