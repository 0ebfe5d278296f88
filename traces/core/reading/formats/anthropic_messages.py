"""Anthropic Messages API pair logs: one request/response pair per line.

Shapes read (all seen in the wild):
- `{"request": BODY, "response": BODY}`, the simplest logger's output;
- claude-trace: `{"request": {timestamp, method, url, headers, body},
  "response": {timestamp, status_code, headers, body | null, body_raw}, "logged_at"}`,
  with streamed responses left as raw server-sent events in `body_raw`;
- VCR cassettes (reshaped by `records`) and nock recordings `{status, headers, body}`
  that hold only a response.

The records are read by `request_log` (the envelopes by `http_record`), the bodies by
`dialects.anthropic`; this module says how such a log is recognised. A request that
continues a server-held thread (`thread: {"type": "continue", …}`) gets its transcript
back from the thread (`message_threads`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...model import Exchange
from ..dialects import anthropic
from ..dialects.base import Dialect
from ._index import anthropic_messages as scoring
from .base import Detection
from .http_record import other_keys
from .message_threads import MessageThreads
from .registry import register
from .request_log import RecordedCall, RequestLogAdapter


@register
class AnthropicMessagesAdapter(RequestLogAdapter):
    name = "anthropic-messages"
    label = "Anthropic Messages API request log"
    where = (
        "Written by claude-trace (`.claude-trace/log-*.jsonl`), by an HTTP logging proxy, "
        "or by your own code that logs each Messages API request and response as one line."
    )
    dialect: ClassVar[Dialect] = anthropic
    normalize = staticmethod(anthropic.normalize_message)
    mapped_request_keys = frozenset({"model", "messages", "system", "tools"})
    not_a_record = "not an Anthropic request/response pair (no 'request' or 'response')"
    nock_fields_in_extra = False

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._threads = MessageThreads()

    def exchange(self, call: RecordedCall) -> Exchange:
        extra = self.extra(call)
        return self.build(self._threads.follow(call, extra), extra)

    @classmethod
    def recognise(cls, value: Any) -> Detection | None:
        return scoring.recognise(value)

    @staticmethod
    def is_model_request(url: str, body: Any) -> bool:
        return _is_messages_request(url, body)

    @staticmethod
    def is_response(value: Any) -> bool:
        return isinstance(value, dict) and value.get("type") == "message"

    def extra(self, call: RecordedCall) -> dict[str, Any]:
        """The common `extra`, with the recorded `timestamp` (the response's, else the
        request's) beside the HTTP envelopes, as this format has always shown it."""
        extra: dict[str, Any] = {
            "request": {k: v for k, v in call.body.items() if k not in self.mapped_request_keys},
            **call.sent.meta,
        }
        if call.sent.meta:
            extra["timestamp"] = call.sent.timestamp
        extra.update(call.outcome.read.meta)
        if call.outcome.read.meta and call.outcome.read.timestamp is not None:
            extra["timestamp"] = call.outcome.read.timestamp
        if call.outcome.streamed:
            extra["streamed"] = True
        extra.update(other_keys(call.value))
        return extra


def _is_messages_request(url: str, body: Any) -> bool:
    """A Messages API call: its endpoint (token counting aside), or a body with messages."""
    path = url.split("?")[0]
    if path.endswith("/v1/messages") or "/v1/messages?" in url:
        return True
    if "/v1/messages/" in path:
        return False  # count_tokens, batches: not a model turn
    return isinstance(body, dict) and isinstance(body.get("messages"), list)
