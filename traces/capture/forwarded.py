"""The forward proxy's calls, handed over once made: recorded as the reverse proxy records.

mitmdump sends a vendor call straight to its upstream and streams the answer to the
client (`forward_addon`); the exchange arrives here afterwards, on loopback, off the
client's path (`forward_exchange`'s format). `GET /api/forward/exchanges` tells the
forward proxy, when it starts, where the calls go (this server's INSPECTOR_UPSTREAM_*,
the reverse proxy's limits and rules: `forward_direct.Routes`); `POST` records one
exchange through the reverse proxy's own code: `proxy.plan_call` decides what it is
(vendor, session, project, format, the upstream URL and the headers as sent on) and
`ExchangeRecording` turns it into the same line, stored by the same writer
(`recording.schedule_recording`), so the sessions, the loops and the live viewers get
the call as they would through `/proxy/`. Both answer only a caller that may record
here (`Access.INGEST`: on a shared server, the forward proxy's ingest token), so the
forward proxy takes the one hop only where its calls will be taken.

Credentials never arrive (the addon masks them) and are masked again here before
anything reads the headers or the query.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from traces.access.principals import TOKEN_PREFIX
from traces.access.rules import Access, access, ingest_project
from traces.capture import forward_exchange, proxy
from traces.capture.proxy_paths import ROUTES, VENDORS
from traces.capture.proxy_upstream import failed_call, note_answer
from traces.conf import inspector_settings
from traces.core.reading.capture import (
    CLIENT_LEFT,
    SECRET_QUERY_KEYS,
    SIGNING_HEADERS,
    UPSTREAM_BROKE_OFF,
    UPSTREAM_UNREACHABLE,
)
from traces.core.reading.credentials import MASK, secret_name
from traces.core.reading.secret_rule import ACCOUNT_HEADERS, SECRET_FIELDS, SECRET_WORDS

META_SLACK = forward_exchange.MAX_META_BYTES + 1
"""What a hand-over may hold besides the two bodies' limits."""


def routes() -> dict[str, Any]:
    """Where the forward proxy sends each vendor's calls and what it checks first: the
    values `proxy.plan_call` uses, so a call sent in one hop is the call it would make."""
    return {
        "upstreams": {
            vendor: {"fixed": ROUTES[vendor].fixed, "base": _shareable(proxy.upstream_base(vendor))}
            for vendor in VENDORS
        },
        "methods": list(proxy.VENDOR_METHODS),
        "max_request_bytes": proxy.request_limit(),
        "max_response_bytes": _response_limit(),
        "session_name": proxy.SESSION_NAME.pattern,
        "secret_rule": {
            "words": SECRET_WORDS.pattern,
            "fields": sorted(SECRET_FIELDS),
            "account": sorted(ACCOUNT_HEADERS),
            "query_keys": sorted(SECRET_QUERY_KEYS),
            "signing": sorted(SIGNING_HEADERS),
        },
        "token_prefix": TOKEN_PREFIX,
        "ca_bundle": str(getattr(settings, "INSPECTOR_UPSTREAM_CA_BUNDLE", "") or ""),
    }


@access(Access.INGEST)
@csrf_exempt
async def exchanges(request: HttpRequest) -> HttpResponse:
    project = await sync_to_async(ingest_project)(request)
    if project is None:
        return JsonResponse({"error": "This Loop Inspector token cannot record here."}, status=403)
    if request.method == "GET":
        return JsonResponse(routes())
    if request.method != "POST":
        return JsonResponse({"error": "GET the routes or POST an exchange."}, status=405)
    declared = request.headers.get("Content-Length", "")
    limit = proxy.request_limit() + _response_limit() + META_SLACK
    if not declared.isdigit() or int(declared) > limit:
        return JsonResponse(
            {"error": f"A hand-over has a length of at most {limit:,} bytes."}, status=413
        )
    try:
        meta, sent, answer = forward_exchange.decode(request.body)
        recorded = record(meta, sent, answer, project)
    except ValueError as exc:
        return JsonResponse({"error": f"Not a forward proxy hand-over: {exc}."}, status=400)
    return JsonResponse({"recorded": recorded}, status=202)


def record(meta: dict[str, Any], sent: bytes, answer: bytes, project: Any) -> bool:
    """Record one handed-over exchange (True), or not, as the reverse proxy would not
    (a path it passes through, a refusal: False). ValueError for metadata that is not
    a hand-over's. Runs on the event loop: the line is stored by its writer task."""
    vendor = _text(meta, "vendor")
    if vendor not in VENDORS:
        raise ValueError(f"{vendor!r} is no vendor")
    ended = _text(meta, "ended")
    if ended not in forward_exchange.ENDINGS:
        raise ValueError(f"{ended!r} is no way for an exchange to end")
    raw, _, query = _text(meta, "path").partition("?")
    query = _masked_query(query)
    headers = proxy.scope_headers(
        [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in _pairs(meta, "headers")
        ]
    )
    headers = {k: MASK if secret_name(k) else v for k, v in headers.items()}
    headers.pop(proxy.SESSION_HEADER, None)  # the session is the one in the metadata
    raw_path = None
    if vendor == "bedrock":
        path = unquote(raw.lstrip("/"))
        raw_path = f"/proxy/bedrock{raw}"
    else:
        fixed = "/" + ROUTES[vendor].fixed
        if not raw.startswith(fixed):
            raise ValueError(f"the path is not under {vendor}'s {fixed}")
        path = unquote(raw[len(fixed) :])
    plan = proxy.plan_call(
        vendor=vendor,
        path=path,
        session=_text(meta, "session") or None,
        method=_text(meta, "method"),
        query=query,
        headers=headers,
        body=sent,
        project=project,
        raw_path=raw_path,
    )
    if isinstance(plan, HttpResponse) or plan.recording is None:
        return False
    recording = plan.recording
    recording.exchange.started_at = _number(meta, "started_at")
    recording.ended_at = _number(meta, "ended_at")
    detail = str(meta.get("detail") or "")[:200]
    status = meta.get("status")
    if status is None:
        if ended == CLIENT_LEFT:
            recording.client_left("the client disconnected before the answer")
        else:
            problem = f"could not reach the upstream ({detail or 'no answer'})"
            failed_call(recording, vendor, 502, problem, UPSTREAM_UNREACHABLE)
        return True
    if not isinstance(status, int):
        raise ValueError("the status is not a number")
    answered: dict[str, str] = {}
    for name, value in _pairs(meta, "response_headers"):
        key = name.lower()
        answered[key] = f"{answered[key]}, {value}" if key in answered else value
    note_answer(recording, status, {k: MASK if secret_name(k) else v for k, v in answered.items()})
    recording.keep(answer)
    truncated_at = meta.get("truncated_at")
    if isinstance(truncated_at, int):
        recording.exchange.truncated_at = truncated_at
    if ended == CLIENT_LEFT:
        recording.client_left("the client disconnected mid-response")
    elif ended == UPSTREAM_BROKE_OFF:
        problem = f"the upstream connection failed mid-response ({detail or 'closed'})"
        recording.finish(problem=problem, outcome=UPSTREAM_BROKE_OFF)
    else:
        recording.finish()
    return True


def _shareable(base: str) -> str:
    """An upstream base the forward proxy may be told: one with a user or password in it
    ('' instead: that vendor's calls take the two hops, the credential stays here)."""
    try:
        parts = urlsplit(base)
        has_userinfo = parts.username is not None or parts.password is not None
    except ValueError:
        return ""
    return "" if has_userinfo else base


def _response_limit() -> int:
    return int(inspector_settings()["PROXY_MAX_RESPONSE_BYTES"])


def _masked_query(query: str) -> str:
    """The query with its secret parameters masked again (as `safe_url` judges them)."""
    pairs = parse_qsl(query, keep_blank_values=True)
    hidden = [k.lower() in SECRET_QUERY_KEYS or secret_name(k) for k, _ in pairs]
    if not any(hidden):
        return query
    return urlencode([(k, MASK if h else v) for (k, v), h in zip(pairs, hidden, strict=True)])


def _text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} is not text")
    return value


def _number(meta: dict[str, Any], key: str) -> float:
    value = meta.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ValueError(f"{key!r} is not a number")
    return float(value)


def _pairs(meta: dict[str, Any], key: str) -> list[tuple[str, str]]:
    value = meta.get(key)
    if not isinstance(value, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in value
    ):
        raise ValueError(f"{key!r} is not a list of [name, value] pairs")
    return [(name, text) for name, text in value]
