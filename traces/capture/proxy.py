"""The recording proxy: agents point their base URL here, calls go on to the vendor.

`/proxy/anthropic/<path>` goes to INSPECTOR_UPSTREAM_ANTHROPIC, `/proxy/openai/v1/<path>`
to INSPECTOR_UPSTREAM_OPENAI, `/proxy/gemini/<path>` to INSPECTOR_UPSTREAM_GEMINI (its
`?key=` forwarded, never recorded), `/proxy/openrouter/api/v1/<path>` to
INSPECTOR_UPSTREAM_OPENROUTER (OpenAI's API shapes, on OpenRouter's own path);
`/proxy/s/<session>/…` or the `X-Loop-Inspector-Session` header names the live trace (else
the default session's). The upstream host comes from settings only: no request can make
this an open proxy.

Async end to end (httpx under daphne): a stream holds no thread, and server-sent events
go to the client chunk by chunk as they arrive. The bytes the client gets are the bytes
the upstream sent; a copy (up to PROXY_MAX_RESPONSE_BYTES) is kept, and once the exchange
ends (completed, failed, cut off by the client or a timeout) it is recorded off the
response path as one line through `record_lines`, the live tail's own path.
Model calls (Messages, Chat Completions, Responses, Gemini's generateContent and
streamGenerateContent) are recorded; other paths (`models`, `count_tokens`, `countTokens`…)
pass through unrecorded. Credentials are forwarded, never stored: the recorded headers are
masked.

This module decides what a request becomes (`plan_call`: the one place its vendor,
session, project and size are checked) and holds the Django view; sending it on and
relaying the answer is `traces.capture.proxy_upstream`. Every error the proxy answers
itself is in the calling vendor's shape (`traces.capture.vendor_errors`), and a wrong URL
says which one to use (`traces.capture.proxy_paths`).
"""

from __future__ import annotations

import re
import time
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from traces.access.rules import TOKEN_HEADER, Access, access, ingest_project, our_token
from traces.capture.bedrock_route import bedrock_target, raw_path_of
from traces.capture.lines import DEFAULT_SESSION
from traces.capture.proxy_paths import ROUTES, misdirected, unknown_path
from traces.capture.proxy_upstream import (
    Plan,
    open_upstream,
    passed_headers,
    relay_body,
    vendor_error,
)
from traces.capture.recording import ExchangeRecording
from traces.capture.vendor_errors import vendor_json, vendor_shaped
from traces.conf import inspector_settings
from traces.core.reading.capture import (
    CapturedExchange,
    forward_headers,
    is_event_stream,
    recorded_format,
    upstream_url,
)

SESSION_HEADER = "X-Loop-Inspector-Session"
VENDOR_METHODS = ("GET", "POST", "DELETE")
"""What the Anthropic and OpenAI APIs take: OPTIONS, TRACE and the rest are refused here,
never passed upstream (issue 26)."""
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


def upstream_base(vendor: str) -> str:
    """The configured base URL of a vendor, or '' when the vendor is off or unknown."""
    name = {
        "anthropic": "INSPECTOR_UPSTREAM_ANTHROPIC",
        "openai": "INSPECTOR_UPSTREAM_OPENAI",
        "gemini": "INSPECTOR_UPSTREAM_GEMINI",
        "openrouter": "INSPECTOR_UPSTREAM_OPENROUTER",
        "bedrock": "INSPECTOR_UPSTREAM_BEDROCK",
    }
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
    received: int | None = None,
    raw_path: str | None = None,
) -> Plan | JsonResponse:
    """The call to make for a request (headers as Django names them), or the vendor-shaped
    refusal: a wrong URL (`proxy_paths.misdirected`), unconfigured vendor, bad session
    name, no project to record in, too large.

    The one check of PROXY_MAX_REQUEST_BYTES, by the Content-Length declared and by the
    bytes `received` (the fast path keeps no more of a body than the limit; by default,
    the body's length). `raw_path`: the request's path as received (ASGI's), from which
    a Bedrock call's path goes on as it was signed (`bedrock_route`)."""
    if method.upper() not in VENDOR_METHODS:
        return vendor_error(
            vendor,
            405,
            "invalid_request_error",
            f"{method} is not a method the vendors' APIs take ({', '.join(VENDOR_METHODS)}).",
        )
    hint = misdirected(
        vendor,
        ROUTES[vendor].fixed + path,
        f"/proxy/s/{session}/" if session else "/proxy/",
    )
    if hint is not None:
        return vendor_error(hint.vendor, 404, "not_found_error", hint.message)
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
    limit = request_limit()
    declared = headers.get("Content-Length", "")
    size = len(body) if received is None else received
    if (declared.isdigit() and int(declared) > limit) or size > limit:
        return too_large(vendor, limit)
    sent = outgoing_headers(headers)
    if vendor == "bedrock":
        target = bedrock_target(base, path, raw_path, query)
        if isinstance(target, str):
            return vendor_error(vendor, 400, "ValidationException", target)
        url = target.url
        sent["Host"] = target.host  # the host its signature covers
    else:
        url = upstream_url(base, path, query)
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


def request_limit() -> int:
    """INSPECTOR['PROXY_MAX_REQUEST_BYTES']: the largest request body sent on."""
    return int(inspector_settings()["PROXY_MAX_REQUEST_BYTES"])


def too_large(vendor: str, limit: int) -> JsonResponse:
    return vendor_error(
        vendor,
        413,
        "request_too_large",
        f"The request is larger than the proxy's {limit:,}-byte limit "
        "(INSPECTOR['PROXY_MAX_REQUEST_BYTES']).",
    )


@vendor_shaped
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
        raw_path=raw_path_of(getattr(request, "scope", None)),
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
    """A path no vendor route takes: the URL meant when it can be told (a missing `/v1`),
    else the routes there are; in the shape of the vendor it names, or of all three."""
    vendor, message = unknown_path(rest)
    return vendor_json(vendor, 404, "not_found_error", message)
