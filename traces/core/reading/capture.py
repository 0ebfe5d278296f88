"""What the recording proxy writes: one request/response pair as one JSON line.

The line has the shape claude-trace and HTTP logging proxies write (`{"request": {url,
method, headers, body, timestamp}, "response": {status_code, headers, body | body_raw,
timestamp}}`), so the adapters that already read those logs (`anthropic-messages`,
`openai-chat`, `openai-responses`) rebuild the call, including a streamed response,
which is kept as the raw server-sent events it arrived as; a binary answer (AWS's event
stream: Bedrock's ConverseStream, InvokeModelWithResponseStream) is kept whole as
`body_base64`. Credentials never reach the line: headers are masked and secret query
parameters dropped before it is written.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import orjson

from traces.core.records import dataclass, field

from .call_outcomes import (
    API_ERROR as API_ERROR,
)
from .call_outcomes import (
    CALL_OUTCOMES as CALL_OUTCOMES,
)
from .call_outcomes import (
    CLIENT_LEFT as CLIENT_LEFT,
)
from .call_outcomes import (
    NOT_THE_API as NOT_THE_API,
)
from .call_outcomes import (
    OUTCOME_KEY as OUTCOME_KEY,
)
from .call_outcomes import (
    OUTCOME_LABELS as OUTCOME_LABELS,
)
from .call_outcomes import (
    TIMEOUT as TIMEOUT,
)
from .call_outcomes import (
    UPSTREAM_BROKE_OFF as UPSTREAM_BROKE_OFF,
)
from .call_outcomes import (
    UPSTREAM_UNREACHABLE as UPSTREAM_UNREACHABLE,
)
from .content_coding import ContentCodingError, decoded
from .credentials import MASK, mask_headers
from .http_body import EVENT_STREAM_TYPE, header
from .secret_rule import secret_name

SECRET_QUERY_KEYS = frozenset({"key", "api_key", "api-key", "apikey", "access_token", "token"})

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
"""Headers that describe one connection, never forwarded by a proxy (RFC 9110 §7.6.1)."""

SIGNING_HEADERS = frozenset({"x-amz-date"})
"""A SigV4 signature's material besides the credentials, never recorded."""


def recorded_format(vendor: str, path: str) -> str | None:
    """The adapter that reads calls to this vendor path, or None for a path that is passed
    through without being recorded (models, count_tokens, files…)."""
    clean = "/" + path.strip("/").split("?", 1)[0]
    if vendor == "anthropic" and clean.endswith("/v1/messages"):
        return "anthropic-messages"
    if vendor in OPENAI_SHAPED and clean.endswith("/chat/completions"):
        return "openai-chat"
    if vendor in OPENAI_SHAPED and clean.endswith("/responses"):
        return "openai-responses"
    if vendor == "gemini" and GEMINI_TURN.search(clean):
        return "gemini"
    if vendor == "bedrock" and BEDROCK_TURN.search(clean):
        return "bedrock-converse"
    if vendor == "bedrock" and BEDROCK_INVOKE.search(clean):
        return "bedrock-invoke"
    return None


OPENAI_SHAPED = ("openai", "openrouter")
"""The vendors whose API takes OpenAI's request and answer shapes (OpenRouter's does)."""

GEMINI_TURN = re.compile(r"/models/[^/:]+:(stream)?[gG]enerateContent$")
"""Gemini's model turns (`countTokens`, `embedContent`… pass through unrecorded)."""

BEDROCK_TURN = re.compile(r"/model/.+/converse(-stream)?$")
"""Bedrock Runtime's Converse and ConverseStream. The model id may be an ARN, slashes
and all."""

BEDROCK_INVOKE = re.compile(r"/model/.+/invoke(-with-response-stream)?$")
"""Bedrock Runtime's InvokeModel and InvokeModelWithResponseStream (Claude Code's and
AnthropicBedrock's calls; `bedrock-invoke` reads Anthropic bodies and says why it leaves
other families' unread). The rest (async invoke, guardrails…) pass through unrecorded."""

PATH_SAFE = "!$&'()*+,;=:@~"
"""RFC 3986 sub-delimiters, ':' and '@' stay as they are in a path segment (Gemini's
`models/gemini-2.5-pro:generateContent`); anything else not unreserved is escaped."""


def upstream_url(base: str, path: str, query: str) -> str:
    """The upstream URL for a proxied path: always under the configured base, whatever
    the path says (no scheme, host or `..` from the request reaches it). The path comes
    percent-decoded (ASGI's), so each segment is escaped again: a `%00`, `%0A`, `%3F` or
    non-ASCII character the client sent reaches the upstream as it was sent, never as a
    control character, a query or a URL the HTTP client refuses. The query string is raw
    already; only bytes no URL may hold are escaped."""
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    escaped = "/".join(quote(p, safe=PATH_SAFE, errors="surrogateescape") for p in parts)
    url = base.rstrip("/") + "/" + escaped
    if not query:
        return url
    return f"{url}?{quote(query, safe=PATH_SAFE + '/?%', errors='surrogateescape')}"


def safe_url(url: str) -> str:
    """The URL to record: secret query parameters (`?key=`…) are dropped."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    kept = [(k, "[masked]" if _secret_query_key(k) else v) for k, v in kept]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def _secret_query_key(name: str) -> bool:
    """A query parameter whose value is a credential: the vendors' key names, and any name
    the secret rule calls secret (SigV4's `X-Amz-Security-Token`, `X-Amz-Signature`,
    `X-Amz-Credential` of a query-signed request)."""
    return name.lower() in SECRET_QUERY_KEYS or secret_name(name)


def forward_headers(headers: dict[str, str], *, drop: frozenset[str]) -> dict[str, str]:
    """The headers to send on: without hop-by-hop ones and those named in `drop`."""
    return {
        k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP and k.lower() not in drop
    }


def is_event_stream(content_type: str) -> bool:
    """Server-sent events (`text/event-stream`)."""
    return content_type.split(";", 1)[0].strip().lower() == "text/event-stream"


def is_aws_event_stream(content_type: str) -> bool:
    """AWS's binary event stream (Bedrock's ConverseStream): bytes, kept as base64."""
    return content_type.split(";", 1)[0].strip().lower() == EVENT_STREAM_TYPE


def is_streamed(content_type: str) -> bool:
    """An answer that arrives piece by piece: server-sent events or AWS event frames."""
    return is_event_stream(content_type) or is_aws_event_stream(content_type)


def sse_error_event(vendor: str, message: str) -> bytes:
    """A server-sent error event in the vendor's own shape (what its SDK raises on)."""
    if vendor == "anthropic":
        body = {"type": "error", "error": {"type": "api_error", "message": message}}
        return b"event: error\ndata: " + orjson.dumps(body) + b"\n\n"
    if vendor == "gemini":
        body = {"error": {"code": 502, "message": message, "status": "UNAVAILABLE"}}
        return b"data: " + orjson.dumps(body) + b"\r\n\r\n"
    body = {"error": {"message": message, "type": "proxy_error", "param": None, "code": None}}
    return b"data: " + orjson.dumps(body) + b"\n\n"


@dataclass
class CapturedExchange:
    """One proxied call as it happened; `line()` is what gets recorded."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: bytes
    started_at: float
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: bytes = b""
    ended_at: float | None = None
    streamed: bool = False
    problem: str | None = None
    """Why the exchange did not complete: the client left, the upstream timed out…"""
    interrupted: bool = False
    outcome: str | None = None
    """How a call that did not complete ended (one of CALL_OUTCOMES); an error status
    with none set is an API error."""
    truncated_at: int | None = None
    """The response passed the size limit: only this many bytes were kept."""
    transport: str | None = None
    """"websocket" for a call made over the Responses API's WebSocket mode."""
    max_decoded_bytes: int = 64 * 1024 * 1024
    """A compressed body (the Codex CLI zstd-compresses its requests) is recorded decoded
    up to this size; past it, or when it cannot be decoded, the line says why instead."""

    def line(self) -> bytes:
        """The exchange as one JSON line (no newline), credentials masked."""
        request: dict[str, Any] = {
            "timestamp": self.started_at,
            "method": self.method,
            "url": safe_url(self.url),
            "headers": _without_signing(mask_headers(self.request_headers)),
        }
        body, problem = self._decoded(self.request_body, self.request_headers)
        request["body"] = None if problem else _json_or_text(body)
        if problem:
            request["body_not_decoded"] = problem
        value: dict[str, Any] = {"request": request, "response": self._response()}
        if self.problem:
            value["proxy_error"] = self.problem
        if self.interrupted:
            value["interrupted"] = self.problem or "the client disconnected"
        outcome = self.outcome or (
            API_ERROR if self.status is not None and self.status >= 400 else None
        )
        if outcome:
            value[OUTCOME_KEY] = outcome
        if self.transport:
            value["transport"] = self.transport
        if self.truncated_at is not None:
            value["proxy_truncated_at"] = self.truncated_at
        return orjson.dumps(value)

    def _response(self) -> dict[str, Any] | None:
        if self.status is None:
            return None
        response: dict[str, Any] = {
            "timestamp": self.ended_at,
            "status_code": self.status,
            "headers": mask_headers(self.response_headers),
        }
        body = self.response_body
        if self.truncated_at is None:
            body, problem = self._decoded(body, self.response_headers)
            if problem:
                response["body"] = None
                response["body_not_decoded"] = problem
                return response
        if is_aws_event_stream(header(self.response_headers, "content-type")):
            # AWS event frames: every byte kept (their CRCs cover them), for the reader to
            # decode. Only these: any other body that is not UTF-8 (a stream cut inside a
            # character) is text with a replacement character, readable and redactable.
            response["body"] = None
            response["body_base64"] = base64.b64encode(body).decode("ascii")
            return response
        text = body.decode("utf-8", "replace")
        if self.streamed or self.truncated_at is not None:
            response["body"] = None
            response["body_raw"] = text
        else:
            parsed = _json_or_text(body)
            if isinstance(parsed, str):
                response["body"] = None
                response["body_raw"] = parsed
            else:
                response["body"] = parsed
        return response

    def _decoded(self, body: bytes, headers: dict[str, str]) -> tuple[bytes, str | None]:
        """The body with its Content-Encoding undone, or as it is and why not."""
        encoding = header(headers, "content-encoding")
        if not body or not encoding:
            return body, None
        try:
            return decoded(body, encoding, self.max_decoded_bytes), None
        except ContentCodingError as exc:
            return body, f"{exc} The {len(body):,} bytes went on as they were sent."


def _without_signing(headers: dict[str, Any]) -> dict[str, Any]:
    """Headers with the rest of a SigV4 signature's material masked too (`Authorization`
    and `X-Amz-Security-Token` are credentials already): its date."""
    return {k: MASK if k.lower() in SIGNING_HEADERS else v for k, v in headers.items()}


def _json_or_text(data: bytes) -> Any:
    if not data:
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return data.decode("utf-8", "replace")
