"""The recording proxy's fast path: `/proxy/…` calls served in the ASGI application,
without Django's request object and middleware stack.

An agent's model call pays only for what the proxy needs before forwarding: the route
(Django's own URL patterns, so `traces.capture.urls` stays the declared surface), the
access rule its view declares (`@access` on `proxy.relay`, decided once and cached for
a moment: `traces.access.decisions`, renewed in the background after a response, so a steady
caller never waits for the lookup), the checks of `proxy.plan_call` (vendor, session
name, size limit) and the same relay and recording as the view. The bytes go to the
client first; the exchange is recorded once the response is sent.

Anything this path does not handle as Django would goes to Django unchanged: a request
with a cookie (a browser's session may be the principal), from a browser (`Origin`,
`Sec-Fetch-Site`, an HTML `Accept`), from another machine in local mode, over plain HTTP
where HTTPS is required, to a host not allowed, or under a script prefix.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.http.request import split_domain_port, validate_host
from django.urls import Resolver404, resolve

from traces.access.cross_site import is_loopback, local_mode
from traces.access.decisions import (
    DecisionKey,
    DecisionStore,
    IngestDecision,
    decision_key,
    ingest_decision,
)
from traces.access.rules import TOKEN_HEADER, Access, our_token, rate_limited
from traces.capture import proxy
from traces.conf import inspector_settings
from traces.storage.db_scope import connection_scope
from traces.stores import store

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

log = logging.getLogger(__name__)

BROWSER_HEADERS = frozenset({b"cookie", b"origin", b"sec-fetch-site"})


class ProxyFastPath:
    """ASGI middleware in front of Django's handler: `/proxy/` relays served directly."""

    def __init__(self, django_app: Callable[..., Awaitable[None]]) -> None:
        self.django_app = django_app
        # The process's stores, looked up once: the fast path reads them on every call.
        self.decisions = store(DecisionStore)
        self.renewals = store(DecisionRenewals)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/proxy/"):
            request = plain_request(scope)
            if request is not None:
                await _serve(request, receive, send, self.decisions, self.renewals)
                return
        await self.django_app(scope, receive, send)


class _Request:
    """What the fast path reads of a request (headers named as Django names them)."""

    __slots__ = ("decision_key", "headers", "kwargs", "method", "query", "rule", "scope", "secret")

    def __init__(self, scope: Scope, headers: dict[str, str], kwargs: dict[str, Any]) -> None:
        self.scope = scope
        self.method = scope["method"].upper()
        # As Django reads it (UTF-8), with any other byte kept (`upstream_url` escapes it).
        self.query = scope.get("query_string", b"").decode("utf-8", "surrogateescape")
        self.headers = headers
        self.kwargs = kwargs
        rules = proxy.relay.access_rules  # type: ignore[attr-defined]
        self.rule: Access = rules.get(self.method, rules["*"])
        self.decision_key: DecisionKey | None = None
        self.secret: str | None = None


def plain_request(scope: Scope) -> _Request | None:
    """The request, when it is a relay this path serves as Django would; else None."""
    if scope.get("root_path"):
        return None
    try:
        match = resolve(scope["path"])
    except Resolver404:
        return None
    if match.func is not proxy.relay:
        return None
    raw_headers = scope.get("headers", [])
    if any(name.lower() in BROWSER_HEADERS for name, _ in raw_headers):
        return None
    headers = proxy.scope_headers(raw_headers)
    if "text/html" in headers.get("Accept", ""):
        return None  # a browser: Django answers refusals with pages
    if not _host_allowed(headers.get("Host", "")):
        return None
    client = scope.get("client") or (None, None)
    if local_mode() and not is_loopback(client[0]):
        return None
    if getattr(settings, "SECURE_SSL_REDIRECT", False) and not _secure(scope, headers):
        return None
    return _Request(scope, headers, match.kwargs)


def _host_allowed(host: str) -> bool:
    domain, _port = split_domain_port(host.lower())
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


def _secure(scope: Scope, headers: dict[str, str]) -> bool:
    if scope.get("scheme") == "https":
        return True
    forwarded = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if not forwarded:
        return False
    name, wanted = forwarded
    value = headers.get(name.removeprefix("HTTP_").replace("_", "-").title(), "")
    return value.split(",", 1)[0].strip() == wanted


class _Gone(Exception):
    """The client disconnected while its request was being read."""


async def _serve(
    request: _Request,
    receive: Receive,
    send: Send,
    decisions: DecisionStore,
    renewals: DecisionRenewals,
) -> None:
    decision, renew = await _decision(request, decisions)
    try:
        await _answer(request, decision, receive, send)
    finally:
        if renew:
            _renew(request, decisions, renewals)


async def _answer(
    request: _Request,
    decision: IngestDecision,
    receive: Receive,
    send: Send,
) -> None:
    if decision.refusal is not None:
        status, message = decision.refusal
        refusal = JsonResponse({"error": message}, status=status)
        if status == 401:
            refusal["WWW-Authenticate"] = 'Bearer realm="loop-inspector"'
        refusal["X-Access-Denied"] = request.rule.value
        await _send_response(refusal, send, request)
        return
    vendor = request.kwargs["vendor"]
    limit = int(inspector_settings()["PROXY_MAX_REQUEST_BYTES"])
    declared = request.headers.get("Content-Length", "")
    body = None
    if not (declared.isdigit() and int(declared) > limit):
        try:
            body = await _read_body(receive, limit)
        except _Gone:
            return
    if body is None:
        await _send_response(proxy.too_large(vendor, limit), send, request)
        return
    if decision.token_id is not None:
        nbytes = int(declared) if declared.isdigit() else 0
        wait = await sync_to_async(_charge)(decision.token_id, request.rule, request.method, nbytes)
        if wait:
            limited = JsonResponse(
                {
                    "error": f"Rate limit of this API token reached: retry in {wait} s.",
                    "retry_after": wait,
                },
                status=429,
            )
            limited["Retry-After"] = str(wait)
            await _send_response(limited, send, request)
            return
    plan = proxy.plan_call(
        vendor=vendor,
        path=request.kwargs["path"],
        session=request.kwargs.get("session"),
        method=request.method,
        query=request.query,
        headers=request.headers,
        body=body,
        project=decision.project,
    )
    if isinstance(plan, HttpResponse):
        await _send_response(plan, send, request)
        return
    if plan.recording is not None:
        plan.recording.held_back = True
    task = asyncio.current_task()
    assert task is not None
    watcher = asyncio.ensure_future(_cancel_on_disconnect(receive, task))
    try:
        await _relay(plan, send, request)
    except asyncio.CancelledError:
        if not watcher.done():
            raise
        # The client went away: recorded as interrupted, nothing more to send.
    finally:
        watcher.cancel()
        if plan.recording is not None:
            plan.recording.release()


async def _relay(plan: proxy.Plan, send: Send, request: _Request) -> None:
    upstream = await proxy.open_upstream(plan)
    if isinstance(upstream, HttpResponse):
        await _send_response(upstream, send, request)
        return
    content_type = upstream.headers.get("content-type", "")
    headers = [(b"content-type", content_type.encode("latin-1"))] if content_type else []
    headers += [
        (k.encode("latin-1"), v.encode("latin-1")) for k, v in proxy.passed_headers(upstream)
    ]
    headers += _site_headers(request)
    streamed = proxy.is_event_stream(content_type)
    chunks = proxy.relay_body(upstream, plan.recording, plan.vendor, streamed)
    try:
        await send(
            {"type": "http.response.start", "status": upstream.status_code, "headers": headers}
        )
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        if plan.recording is not None:
            plan.recording.finish(interrupted=True, problem="the client disconnected mid-response")
        raise
    finally:
        await chunks.aclose()
        await upstream.aclose()


async def _decision(request: _Request, decisions: DecisionStore) -> tuple[IngestDecision, bool]:
    """`@access(rule)` and the project to record in: one lookup, reused for a moment;
    and whether to renew it once this request is answered (`_renew`)."""
    secret = our_token(request.headers.get("Authorization"), request.headers.get(TOKEN_HEADER))
    request.decision_key = key = decision_key(request.rule, secret)
    request.secret = secret
    found = decisions.cached(key, time.monotonic())
    if found is not None:
        return found
    return await _fresh_decision(request.rule, secret, key, decisions), False


async def _fresh_decision(
    rule: Access, secret: str | None, key: DecisionKey, decisions: DecisionStore
) -> IngestDecision:
    started, seen_generation = time.monotonic(), decisions.generation
    found = await sync_to_async(_look_up)(rule, secret)
    decisions.remember(key, found, started, seen_generation)
    return found


class DecisionRenewals:
    """The decisions being looked up again in the background (`_renew`), by key: at most
    one lookup per key at a time. Used on the event loop only."""

    def __init__(self) -> None:
        self._tasks: dict[DecisionKey, asyncio.Task] = {}

    def __contains__(self, key: DecisionKey) -> bool:
        return key in self._tasks

    def __len__(self) -> int:
        return len(self._tasks)

    def add(self, key: DecisionKey, task: asyncio.Task) -> None:
        self._tasks[key] = task

    def done(self, key: DecisionKey) -> None:
        self._tasks.pop(key, None)

    def tasks(self) -> list[asyncio.Task]:
        """The lookups under way (a test awaits them instead of guessing their time)."""
        return list(self._tasks.values())

    def clear(self) -> None:
        """Forget the tasks (they run on; the next due decision starts another)."""
        self._tasks.clear()


def _renew(request: _Request, decisions: DecisionStore, renewals: DecisionRenewals) -> None:
    """Look the request's decision up again in the background, once per key at a time:
    called after the response is sent, so the lookup's thread does not compete with the
    relay for the interpreter."""
    key = request.decision_key
    if key is None or key in renewals:
        return
    task = asyncio.get_running_loop().create_task(
        _fresh_decision(request.rule, request.secret, key, decisions)
    )
    renewals.add(key, task)

    def done(task: asyncio.Task) -> None:
        renewals.done(key)
        if not task.cancelled() and task.exception() is not None:
            # The cached decision expires as it would have; the next request looks up.
            log.warning("could not renew a proxy access decision", exc_info=task.exception())

    task.add_done_callback(done)


def _look_up(rule: Access, secret: str | None) -> IngestDecision:
    with connection_scope():
        return ingest_decision(rule, secret)


def _charge(token_id: int, rule: Access, method: str, nbytes: int) -> int:
    with connection_scope():
        return rate_limited(token_id, rule, method, nbytes)


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body; None once it passes `limit` (the rest is read and dropped)."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Gone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= limit:
            parts.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(parts) if size <= limit else None


async def _cancel_on_disconnect(receive: Receive, task: asyncio.Task) -> None:
    """Cancel the relay when the client disconnects (as Django's handler does)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            task.cancel()
            return


async def _send_response(response: HttpResponse, send: Send, request: _Request) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.items()]
    headers += _site_headers(request)
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": response.content})


def _site_headers(request: _Request) -> list[tuple[bytes, bytes]]:
    """The headers Django's middleware puts on every response (SecurityMiddleware,
    X-Frame-Options, the content security policy)."""
    found: list[tuple[str, str]] = []
    hsts = getattr(settings, "SECURE_HSTS_SECONDS", 0)
    if hsts and _secure(request.scope, request.headers):
        value = f"max-age={hsts}"
        if getattr(settings, "SECURE_HSTS_INCLUDE_SUBDOMAINS", False):
            value += "; includeSubDomains"
        if getattr(settings, "SECURE_HSTS_PRELOAD", False):
            value += "; preload"
        found.append(("Strict-Transport-Security", value))
    if getattr(settings, "SECURE_CONTENT_TYPE_NOSNIFF", True):
        found.append(("X-Content-Type-Options", "nosniff"))
    referrer = getattr(settings, "SECURE_REFERRER_POLICY", None)
    if referrer:
        found.append(("Referrer-Policy", referrer))
    opener = getattr(settings, "SECURE_CROSS_ORIGIN_OPENER_POLICY", "same-origin")
    if opener:
        found.append(("Cross-Origin-Opener-Policy", opener))
    found.append(("X-Frame-Options", getattr(settings, "X_FRAME_OPTIONS", "DENY")))
    policy = store(SitePolicies).policy()
    if policy:
        found.append(("Content-Security-Policy", policy))
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in found]


class SitePolicies:
    """The content security policy of each settings seen (by the id of its
    CONTENT_SECURITY_POLICY), built once per settings."""

    def __init__(self) -> None:
        self._policies: dict[int, str] = {}

    def policy(self) -> str:
        """The content security policy of the current settings."""
        key = id(getattr(settings, "CONTENT_SECURITY_POLICY", None))
        found = self._policies.get(key)
        if found is None:
            found = self._policies[key] = build_policy()
        return found

    def clear(self) -> None:
        self._policies.clear()
