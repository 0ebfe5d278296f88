"""One recorded HTTP exchange read into typed parts: request, response, status, headers,
timing and streaming, before any vendor dialect reads the bodies.

Request logs hold the same envelopes whatever the API (see `request_log`):
- `{"request": BODY, "response": BODY}`, the simplest logger's output;
- HTTP pairs `{"request": {url, method, headers, body, timestamp?}, "response":
  {status_code, headers, body | null, body_raw | body_base64, timestamp?}}` as
  claude-trace-like proxies and ours write them (`body_base64`: a binary body, AWS's
  event stream) and as VCR cassettes become in `records` (streamed responses stay raw SSE
  text, or a list of decoded frames);
- a nock recording `{status, headers, body}` that holds only a response.

Headers and URLs are masked on the way in: recorded credentials never reach a report.
"""

from __future__ import annotations

import base64
import contextlib
from typing import Any

import orjson

from traces.core.records import dataclass, field, replace

from ..credentials import mask_headers, mask_url
from ..dialects.base import Dialect
from ..http_body import decode_body

PAIR_KEYS = ("request", "response")


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
    meta = {k: v for k, v in response.items() if k not in ("body", "body_raw", "body_base64")}
    if isinstance(meta.get("headers"), dict):
        meta["headers"] = mask_headers(meta["headers"])
    read.meta = {"http_response": meta}
    read.timestamp = response.get("timestamp")
    body = response.get("body")
    if body is None and isinstance(response.get("body_raw"), str):
        body = response["body_raw"]
    if body is None and isinstance(response.get("body_base64"), str):
        body = _binary_body(response["body_base64"], response.get("headers"))
    _take_body(read, body)
    return read


def _binary_body(encoded: str, headers: Any) -> Any:
    """A body the recording proxy kept as base64 (an AWS event stream: its frames)."""
    try:
        data = base64.b64decode(encoded, validate=True)
    except ValueError:
        return "[a body_base64 that is not base64]"
    return decode_body(data, headers)


def _is_http_response(response: dict[str, Any]) -> bool:
    if "status_code" in response or "body_raw" in response or "body_base64" in response:
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


def read_outcome(response: Any, dialect: Dialect) -> Outcome:
    """A recorded response read through a dialect, whatever its envelope and streaming."""
    read = read_http_response(response)
    pieces = dialect.assemble_pieces(read.body) if isinstance(read.body, list) else None
    if pieces is not None:
        read.body, read.problem = pieces
        return replace(settle_outcome(read, dialect), streamed=True)
    return settle_outcome(read, dialect)


def stream_outcome(body: Any, problem: str | None, dialect: Dialect) -> Outcome:
    """A response rebuilt from stream pieces logged one per record, without its request."""
    read = ResponseRead(body=body, problem=problem)
    return replace(settle_outcome(read, dialect), streamed=True)


def settle_outcome(read: ResponseRead, dialect: Dialect) -> Outcome:
    """Apply a dialect to a response: rebuild streams, find API errors and HTTP failures.

    A failed call keeps its error body in `failed_body` and has no response body; a
    stream cut short keeps what arrived and is still marked failed.
    """
    body = read.body
    error = read.problem
    streamed = read.stream_text is not None
    if read.stream_text is not None:
        body, error = dialect.assemble_stream(read.stream_text)
    api_error = dialect.error_text(body)
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
