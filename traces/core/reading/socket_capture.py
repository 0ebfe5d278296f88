"""The Responses API's WebSocket mode, recorded as the HTTP calls it stands for.

The Codex CLI (its default transport) and the OpenAI SDK's `responses.connect()` keep one
socket open to `<base>/responses` and send a `response.create` event per model call; the
server answers each with the very events a streamed HTTP call would carry, ending with
`response.completed` (or `.failed`, `.incomplete`, or an `error`). The recording proxy
relays those frames unchanged and feeds a copy here: each `response.create` becomes the
request body of one exchange, and the events of its answer become the server-sent events
of that exchange's response, so the line is the one an HTTP stream of the same call
would have left and the `openai-responses` adapter reads it as such (a call that
continues by `previous_response_id` included).

Pure bookkeeping: no sockets here, just frames in and finished lines out.
"""

from __future__ import annotations

from collections import deque

import orjson

from traces.core.records import dataclass, field

from .capture import CapturedExchange

TERMINAL_EVENTS = frozenset(
    {"response.completed", "response.failed", "response.incomplete", "error"}
)
"""Events after which no more belong to the response under way."""


@dataclass
class _Open:
    exchange: CapturedExchange
    body: bytearray = field(default_factory=bytearray)


@dataclass
class SocketRecorder:
    """One relayed socket's exchanges, in the order their requests were sent."""

    url: str
    """The HTTP URL the calls stand for (the upstream's `…/responses`)."""
    headers: dict[str, str]
    """The handshake's headers as sent upstream (masked when the line is written)."""
    max_bytes: int
    """Of one response's events kept for the record (the client still gets them all)."""
    _open: deque[_Open] = field(default_factory=deque)

    def client_frame(self, text: str, now: float) -> bool:
        """A frame the client sent: whether it opened an exchange (a `response.create`)."""
        event = _event(text)
        if event is None or event.get("type") != "response.create":
            return False
        body = {key: value for key, value in event.items() if key != "type"}
        nested = body.get("response")
        if isinstance(nested, dict) and "model" not in body:
            body = dict(nested)  # the parameters under "response", as Realtime nests them
        body.setdefault("stream", True)
        exchange = CapturedExchange(
            "POST",
            self.url,
            self.headers,
            orjson.dumps(body),
            now,
            status=200,
            response_headers={"content-type": "text/event-stream"},
            streamed=True,
            transport="websocket",
            max_decoded_bytes=self.max_bytes,
        )
        self._open.append(_Open(exchange))
        return True

    def discard_last(self) -> None:
        """Forget the exchange just opened: its request was not sent on (rate limit)."""
        self._open.pop()

    def server_frame(self, text: str, now: float) -> bytes | None:
        """A frame the upstream sent, kept as a server-sent event of the response under
        way; the exchange's line when this frame ends it."""
        if not self._open:
            return None  # not about a response (a session event, an error before any)
        event = _event(text)
        kind = str(event.get("type") or "message") if event is not None else "message"
        current = self._open[0]
        chunk = b"event: " + kind.encode() + b"\ndata: " + text.encode() + b"\n\n"
        exchange = current.exchange
        if exchange.truncated_at is None:
            if len(current.body) + len(chunk) > self.max_bytes:
                exchange.truncated_at = len(current.body)
            else:
                current.body += chunk
        if kind not in TERMINAL_EVENTS:
            return None
        self._open.popleft()
        return _finished(current, now)

    def close(self, now: float, problem: str, outcome: str) -> list[bytes]:
        """The lines of the exchanges still open when the socket closed: interrupted, by
        the client or the upstream (`outcome`, one of `capture.CALL_OUTCOMES`)."""
        lines = []
        while self._open:
            current = self._open.popleft()
            current.exchange.interrupted = True
            current.exchange.outcome = outcome
            lines.append(_finished(current, now, problem))
        return lines


def _finished(current: _Open, now: float, problem: str | None = None) -> bytes:
    exchange = current.exchange
    exchange.response_body = bytes(current.body)
    exchange.ended_at = now
    exchange.problem = problem
    return exchange.line()


def _event(text: str) -> dict[str, object] | None:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
