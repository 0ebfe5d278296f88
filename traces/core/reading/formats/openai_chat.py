"""OpenAI Chat Completions request logs: one request/response pair per record.

Shapes read:
- `{"request": BODY, "response": BODY}`, the simplest logger's output;
- HTTP pairs `{"request": {url, method, headers, body}, "response": {status_code,
  headers, body | null, body_raw}}` as claude-trace-like proxies write them and as VCR
  YAML cassettes become in `records` (streamed responses stay raw SSE text);
- response-only records: a `chat.completion` object, a nock recording `{status, headers,
  body}`, or `chat.completion.chunk` objects one per line (joined back by id).

Each record is one call; the request's `messages` hold the whole transcript, so loops
are grouped by transcript prefix. The records are read by `request_log`, the bodies by
`dialects.openai_chat`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from ..dialects import openai_chat as chat
from ..dialects.base import Dialect
from ..records import Record
from ..timeparse import to_epoch_seconds
from .base import AdapterEvent, Detection
from .http_record import compact_text, is_nock, read_request, request_url, stream_outcome
from .registry import register
from .request_log import RecordedCall, RequestLogAdapter


@register
class OpenAIChatAdapter(RequestLogAdapter):
    name = "openai-chat"
    label = "OpenAI Chat Completions request log"
    where = (
        "Written by an HTTP logging proxy, a VCR cassette of /v1/chat/completions traffic, "
        "or your own code that logs each Chat Completions request and response as one line "
        "(any OpenAI-compatible server: vLLM, Ollama, OpenRouter, LiteLLM…)."
    )
    dialect: ClassVar[Dialect] = chat
    normalize = staticmethod(chat.normalize_message)
    mapped_request_keys = frozenset({"model", "messages", "tools"})
    not_a_record = "not a Chat Completions record (no 'request', 'response' or completion object)"

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._chunks: list[Any] = []
        self._chunk_line = 0
        self._chunk_id: Any = None

    @classmethod
    def recognise(cls, value: Any) -> Detection | None:
        return _recognise(value)

    @staticmethod
    def is_model_request(url: str, body: Any) -> bool:
        """A Chat Completions call: its endpoint, or (behind a proxy) a body with messages."""
        if "/chat/completions" in url:
            return True
        return isinstance(body, dict) and isinstance(body.get("messages"), list)

    @staticmethod
    def is_response(value: Any) -> bool:
        return _is_completion(value)

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
        yield from super().feed(record)

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._flush_chunks()

    def _flush_chunks(self) -> Iterator[AdapterEvent]:
        """Chunks logged one per line form one streamed response, without its request."""
        if not self._chunks:
            return
        chunks, self._chunks = self._chunks, []
        body, error = chat.assemble_chunks(chunks)
        yield self.response_only(self._chunk_line, stream_outcome(body, error, chat))

    def system(self, call: RecordedCall) -> Any:
        return chat.system_of(call.messages)

    def times(self, call: RecordedCall) -> tuple[float | None, float | None]:
        """The request's own timestamp; else the completion's `created` (whole seconds)."""
        started = call.sent.timestamp or call.value.get("started_at") or call.value.get("timestamp")
        if started is None and isinstance(call.outcome.body, dict):
            started = call.outcome.body.get("created")
        return to_epoch_seconds(started), super().times(call)[1]

    def extra(self, call: RecordedCall) -> dict[str, Any]:
        extra = super().extra(call)
        reply = call.reply_body
        finish_reason = chat.finish_reason_of(reply)
        if finish_reason is not None:
            extra["finish_reason"] = finish_reason
        if call.outcome.streamed:
            extra["streamed"] = True
        choices = reply.get("choices")
        if isinstance(choices, list) and len(choices) > 1:
            extra["choices"] = len(choices)
        for key in ("id", "system_fingerprint", "service_tier"):
            if reply.get(key) is not None:
                extra[f"response_{key}"] = reply[key]
        return extra


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
