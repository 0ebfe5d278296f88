"""The recording proxy: agents point their base URL here, calls go on to the vendor.

`/proxy/anthropic/<path>` goes to INSPECTOR_UPSTREAM_ANTHROPIC, `/proxy/openai/v1/<path>`
to INSPECTOR_UPSTREAM_OPENAI; `/proxy/s/<session>/…` or the `X-Loop-Inspector-Session`
header names the live trace (else the default session's). The upstream host comes from
settings only: no request can make this an open proxy.

Async end to end (httpx under daphne): a stream holds no thread, and server-sent events
go to the client chunk by chunk as they arrive. The bytes the client gets are the bytes
the upstream sent; a copy (up to PROXY_MAX_RESPONSE_BYTES) is kept, and once the exchange
ends (completed, failed, cut off by the client or a timeout) it is recorded off the
response path as one line through `record_lines`, the live tail's own path.
Model calls (Messages, Chat Completions, Responses) are recorded; other paths
(`models`, `count_tokens`…) pass through unrecorded. Credentials are forwarded, never
stored: the recorded headers are masked.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from http.cookiejar import Cookie, CookieJar
from typing import Any

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from traces.access.rules import TOKEN_HEADER, Access, access, ingest_project, our_token
from traces.capture.lines import DEFAULT_SESSION
from traces.capture.recording import ExchangeRecording
from traces.conf import inspector_settings
from traces.core.reading.capture import (
    HOP_BY_HOP,
    CapturedExchange,
    forward_headers,
    is_event_stream,
    recorded_format,
    sse_error_event,
    upstream_url,
)
from traces.stores import store

log = logging.getLogger(__name__)

SESSION_HEADER = "X-Loop-Inspector-Session"
SESSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")

DROP_REQUEST_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "accept-encoding",
        "cookie",
        SESSION_HEADER.lower(),
        TOKEN_HEADER.lower(),
    }
)
"""Not sent on: ours (the session, the Loop Inspector token, this site's cookies) or the
connection's. The upstream is asked for an uncompressed body, so the copy can be read
as it is. `Authorization` goes on unless it carries our token (`outgoing_headers`)."""
DROP_RESPONSE_HEADERS = HOP_BY_HOP | {"content-length"}


def upstream_base(vendor: str) -> str:
    """The configured base URL of a vendor, or '' when the vendor is off or unknown."""
    name = {"anthropic": "INSPECTOR_UPSTREAM_ANTHROPIC", "openai": "INSPECTOR_UPSTREAM_OPENAI"}
    return str(getattr(settings, name[vendor], "") or "") if vendor in name else ""


def session_name(in_path: str | None, headers: dict[str, str]) -> str | None:
    """The session a call records into: the one in its path, else its header's, else the
    default; None when the name given is not a valid one."""
    session = in_path or headers.get(SESSION_HEADER) or DEFAULT_SESSION
    return session if SESSION_NAME.match(session) else None


def scope_headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """An ASGI scope's headers named as Django names them (`Content-Type`), repeated ones
    joined with commas; names with an underscore are dropped, as Django drops them (so
    `X_Api_Key` cannot pass for `X-Api-Key`)."""
    found: dict[str, str] = {}
    for raw_name, raw_value in raw:
        name = raw_name.decode("latin-1")
        if "_" in name:
            continue
        title, value = name.title(), raw_value.decode("latin-1")
        found[title] = f"{found[title]},{value}" if title in found else value
    return found


# -- the view -----------------------------------------------------------------------------
@dataclass
class Plan:
    """One call to send on: where, with what, and its recording (None: passed through)."""

    vendor: str
    method: str
    url: str
    headers: dict[str, str]
    body: bytes
    recording: ExchangeRecording | None


def plan_call(
    *,
    vendor: str,
    path: str,
    session: str | None,
    method: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
    project: Any,
) -> Plan | JsonResponse:
    """The call to make for a request (headers as Django names them), or the vendor-shaped
    refusal: unconfigured vendor, bad session name, no project to record in, too large."""
    base = upstream_base(vendor)
    if not base:
        return vendor_error(
            vendor,
            404,
            "not_found_error",
            f"No upstream is configured for {vendor}: set INSPECTOR_UPSTREAM_{vendor.upper()}.",
        )
    session = session_name(session, headers)
    if session is None:
        return vendor_error(
            vendor,
            400,
            "invalid_request_error",
            "A Loop Inspector session name is 1-100 letters, digits, '.', '_', ':' or '-'.",
        )
    if project is None:
        return vendor_error(
            vendor, 403, "permission_error", "This Loop Inspector token cannot record here."
        )
    limit = int(inspector_settings()["PROXY_MAX_REQUEST_BYTES"])
    declared = headers.get("Content-Length", "")
    if (declared.isdigit() and int(declared) > limit) or len(body) > limit:
        return too_large(vendor, limit)
    url = upstream_url(base, path, query)
    sent = outgoing_headers(headers)
    format_name = recorded_format(vendor, path) if method == "POST" else None
    recording = (
        ExchangeRecording(
            CapturedExchange(
                method,
                url,
                sent,
                body,
                time.time(),
                max_decoded_bytes=int(inspector_settings()["PROXY_MAX_RESPONSE_BYTES"]),
            ),
            format_name,
            session,
            project,
        )
        if format_name
        else None
    )
    return Plan(vendor, method, url, sent, body, recording)


def outgoing_headers(headers: dict[str, str]) -> dict[str, str]:
    """The caller's headers as the upstream gets them: the vendor's key goes on, a Loop
    Inspector token (ours to check, in its header or as `Authorization: Bearer li_…`)
    never leaves this server."""
    drop = DROP_REQUEST_HEADERS
    authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
    if our_token(authorization, None) is not None:
        drop = drop | {"authorization"}
    sent = forward_headers(headers, drop=drop)
    sent["Accept-Encoding"] = "identity"
    return sent


def too_large(vendor: str, limit: int) -> JsonResponse:
    return vendor_error(
        vendor,
        413,
        "request_too_large",
        f"The request is larger than the proxy's {limit:,}-byte limit "
        "(INSPECTOR['PROXY_MAX_REQUEST_BYTES']).",
    )


async def open_upstream(plan: Plan) -> httpx.Response | JsonResponse:
    """The upstream's answer, its body not read yet; or the vendor-shaped error when it
    could not be reached (recorded as a failed call)."""
    recording = plan.recording
    client = _client()
    # The header bytes as the client sent them (Django and the fast path read them as
    # Latin-1): httpx would refuse any value that is not ASCII text.
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in plan.headers.items()]
    try:
        outgoing = client.build_request(plan.method, plan.url, headers=headers, content=plan.body)
    except (httpx.InvalidURL, ValueError) as exc:  # UnicodeError is a ValueError
        return _failed(
            recording,
            plan.vendor,
            400,
            f"the request cannot be forwarded ({exc})",
            "invalid_request_error",
        )
    try:
        upstream = await client.send(outgoing, stream=True)
    except asyncio.CancelledError:  # the client left before the upstream answered
        if recording is not None:
            recording.finish(interrupted=True, problem="the client disconnected before the answer")
        raise
    except httpx.TimeoutException as exc:
        setting = (
            "PROXY_CONNECT_TIMEOUT"
            if isinstance(exc, httpx.ConnectTimeout)
            else "PROXY_READ_TIMEOUT"
        )
        seconds = inspector_settings()[setting]
        return _failed(
            recording, plan.vendor, 504, f"the upstream did not answer within {seconds} s"
        )
    except httpx.HTTPError as exc:
        return _failed(
            recording, plan.vendor, 502, f"could not reach the upstream ({exc.__class__.__name__})"
        )
    if recording is not None:
        recording.exchange.status = upstream.status_code
        recording.exchange.response_headers = dict(upstream.headers)
        recording.exchange.streamed = is_event_stream(upstream.headers.get("content-type", ""))
    return upstream


def passed_headers(upstream: httpx.Response) -> list[tuple[str, str]]:
    """The upstream's response headers the client gets (Content-Type apart), and the
    header that keeps any proxy in front from buffering an event stream."""
    found = [
        (key, value)
        for key, value in upstream.headers.multi_items()
        if key.lower() not in DROP_RESPONSE_HEADERS and key.lower() != "content-type"
    ]
    if is_event_stream(upstream.headers.get("content-type", "")):
        found.append(("X-Accel-Buffering", "no"))
    return found


@access(Access.INGEST)
@csrf_exempt
async def relay(
    request: HttpRequest, vendor: str, path: str, session: str | None = None
) -> HttpResponse:
    """The proxy through Django's stack: requests the fast path (traces.capture.proxy_asgi) leaves
    to Django (a browser's, with a session cookie), and Django's test client."""
    project = await sync_to_async(ingest_project)(request) if upstream_base(vendor) else None
    plan = plan_call(
        vendor=vendor,
        path=path,
        session=session,
        method=request.method or "POST",
        query=request.META.get("QUERY_STRING", ""),
        headers=dict(request.headers),
        body=request.body,
        project=project,
    )
    if isinstance(plan, JsonResponse):
        return plan
    upstream = await open_upstream(plan)
    if isinstance(upstream, JsonResponse):
        return upstream
    content_type = upstream.headers.get("content-type", "")
    response = StreamingHttpResponse(
        relay_body(upstream, plan.recording, vendor, is_event_stream(content_type)),
        status=upstream.status_code,
        content_type=content_type or None,
    )
    for key, value in passed_headers(upstream):
        response.headers[key] = value
    return response


@access(Access.PUBLIC)
@csrf_exempt
async def unknown_vendor(request: HttpRequest, rest: str) -> JsonResponse:
    return JsonResponse(
        {
            "error": "Unknown proxy path. Point the SDKs at /proxy/anthropic (Anthropic "
            "Messages) or /proxy/openai/v1 (OpenAI Chat Completions and Responses); name a "
            "session with /proxy/s/<session>/anthropic or /proxy/s/<session>/openai/v1."
        },
        status=404,
    )


def vendor_error(vendor: str, status: int, kind: str, message: str) -> JsonResponse:
    """An error in the shape the vendor's SDK reads, so the agent shows our message."""
    text = f"Loop Inspector proxy: {message}"
    if vendor == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": text}}
    else:
        body = {"error": {"message": text, "type": kind, "param": None, "code": None}}
    return JsonResponse(body, status=status)


def _failed(
    recording: ExchangeRecording | None,
    vendor: str,
    status: int,
    problem: str,
    kind: str = "api_error",
) -> JsonResponse:
    """The call could not be made (the upstream out of reach, a request no HTTP client
    can send): answer as the vendor would, record the call as failed."""
    response = vendor_error(vendor, status, kind, problem)
    if recording is not None:
        exchange = recording.exchange
        exchange.status = status
        exchange.response_headers = {"content-type": "application/json"}
        exchange.response_body = response.content
        recording.finish(problem=problem)
    return response


async def relay_body(
    upstream: httpx.Response, recording: ExchangeRecording | None, vendor: str, streamed: bool
) -> AsyncIterator[bytes]:
    """The upstream's bytes as they arrive; the exchange is recorded however it ends.

    A client that goes away while this waits for the upstream cancels it here; one that
    goes away while its chunk is being sent cancels the request's task instead, which
    the done-callback notices.
    """
    task = asyncio.current_task()
    if recording is not None and task is not None:
        task.add_done_callback(recording.on_task_done)
    try:
        async for chunk in upstream.aiter_raw():
            if recording is not None:
                recording.keep(chunk)
            yield chunk
    except asyncio.CancelledError:
        if recording is not None:
            recording.finish(interrupted=True, problem="the client disconnected mid-response")
        raise
    except httpx.HTTPError as exc:
        if isinstance(exc, httpx.TimeoutException):
            seconds = inspector_settings()["PROXY_READ_TIMEOUT"]
            problem = f"the upstream sent nothing for {seconds} s (read timeout)"
        else:
            problem = f"the upstream connection failed mid-response ({exc})"
        if recording is not None:
            recording.finish(problem=problem)
        if streamed:
            # ASGI cannot drop the client's connection: an error event, as the vendor
            # sends one mid-stream, tells its SDK that the stream did not complete.
            yield sse_error_event(vendor, f"Loop Inspector proxy: {problem}")
    finally:
        if recording is not None:
            recording.finish()
        await upstream.aclose()


# -- the HTTP client ------------------------------------------------------------------------
class UpstreamClients:
    """The pooled upstream client of each event loop (`_client`)."""

    def __init__(self) -> None:
        self.by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    def clear(self) -> None:
        """Forget the clients (each goes with its loop's last reference)."""
        self.by_loop.clear()


class _NoCookies(CookieJar):
    """The pooled client serves every caller, so it keeps no cookie: one the upstream sets
    (Cloudflare's `__cf_bm` in front of a vendor's API, say) goes to the caller that got
    it, in the response's headers, and never rides on another caller's next call."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def set_cookie(self, cookie: Cookie) -> None:
        return None


def _client() -> httpx.AsyncClient:
    """One pooled client per event loop (daphne runs one). It adds nothing of its own to
    a call: no cookie (`_NoCookies`) and none of httpx's default headers (its
    `User-Agent` and `Accept`), so the upstream sees the caller's headers."""
    loop = asyncio.get_running_loop()
    clients = store(UpstreamClients).by_loop
    client = clients.get(loop)
    if client is None:
        timeout = httpx.Timeout(
            connect=float(inspector_settings()["PROXY_CONNECT_TIMEOUT"]),
            read=float(inspector_settings()["PROXY_READ_TIMEOUT"]),
            write=60.0,
            pool=60.0,
        )
        client = httpx.AsyncClient(
            timeout=timeout,
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
            follow_redirects=False,
            trust_env=False,
            cookies=_NoCookies(),
        )
        client.headers.clear()
        clients[loop] = client
    return client
