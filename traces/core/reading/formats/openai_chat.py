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
from ._index import openai_chat as scoring
from ._index.openai_chat import _is_completion
from .base import AdapterEvent, Detection
from .http_record import stream_outcome
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
        return scoring.recognise(value)

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
