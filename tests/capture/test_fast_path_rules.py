"""The proxy's ASGI fast path follows Django's own rules: the host check, the HTTPS
redirect (with its exemptions) and the headers every response gets are Django's
(`traces.capture.site_rules`), and the size limit is `proxy.plan_call`'s, the one check.

Each case is asked of both ways in: a request the fast path serves and the same request
with a cookie, which goes through Django's whole stack.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from django.db import connections
from django.http import HttpResponse
from django.middleware.security import SecurityMiddleware

from inspector.asgi import application
from tests.live.conftest import run_async
from traces.access.decisions import forget_decisions
from traces.capture import proxy_asgi
from traces.capture.proxy import scope_headers
from traces.capture.site_rules import ScopeRequest, site_headers

URL = "/proxy/s/rules/anthropic/v1/messages"
SITE_HEADERS = (
    "x-content-type-options",
    "referrer-policy",
    "cross-origin-opener-policy",
    "x-frame-options",
    "content-security-policy",
    "strict-transport-security",
)


def scope(headers=(), scheme="http", path=URL, host=b"127.0.0.1") -> dict:
    return {
        "type": "http",
        "method": "POST",
        "path": path,
        "scheme": scheme,
        "headers": [(b"host", host), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


def fast(**kwargs) -> bool:
    """Whether the fast path serves the request (else Django does)."""
    return proxy_asgi.plain_request(scope(**kwargs)) is not None


def served(*, cookie: bool, body: bytes = b"{}", headers=(), scheme="http"):
    """(status, headers) of one call through the ASGI application."""
    sent = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), *headers]
    if cookie:
        sent.append((b"cookie", b"unrelated=1"))

    async def call():
        try:
            communicator = HttpCommunicator(application, "POST", URL, body=body, headers=sent)
            communicator.scope["client"] = ("127.0.0.1", 5000)
            communicator.scope["scheme"] = scheme
            response = await communicator.get_response(timeout=10)
            await communicator.wait(timeout=10)
            return response
        finally:
            forget_decisions()
            await database_sync_to_async(connections.close_all)()

    response = run_async(call)
    found: dict[str, list[str]] = {}
    for name, value in response["headers"]:
        found.setdefault(name.decode().lower(), []).append(value.decode())
    return response["status"], found, response["body"]


def test_a_host_django_refuses_is_left_to_django(settings):
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["inspector.example"]
    assert not fast()
    assert fast(host=b"inspector.example")
    settings.USE_X_FORWARDED_HOST = True  # Django reads the forwarded host: so does the path
    assert not fast(host=b"inspector.example", headers=[(b"x-forwarded-host", b"evil")])


def test_an_https_redirect_is_left_to_django_and_its_exemptions_kept(settings):
    settings.SECURE_SSL_REDIRECT = True
    assert not fast()
    assert fast(scheme="https")
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert fast(headers=[(b"x-forwarded-proto", b"https")])
    settings.SECURE_REDIRECT_EXEMPT = [r"^proxy/"]
    assert fast()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_both_ways_answer_with_the_same_site_headers(settings, scheme):
    settings.INSPECTOR_UPSTREAM_ANTHROPIC = ""  # a vendor-shaped 404 from either way
    assert fast(scheme=scheme)
    fast_status, fast_headers, _ = served(cookie=False, scheme=scheme)
    django_status, django_headers, _ = served(cookie=True, scheme=scheme)
    assert fast_status == django_status == 404
    for name in SITE_HEADERS:
        assert fast_headers.get(name) == django_headers.get(name), name
    assert fast_headers["x-frame-options"] == ["DENY"]
    assert len(fast_headers["content-security-policy"]) == 1


def test_hsts_is_djangos_over_https_only(settings):
    """(Django's stack reads SECURE_HSTS_* once, when it starts; the fast path's headers
    follow a changed setting, so they are compared with Django's middleware made now.)"""
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_HSTS_PRELOAD = True
    for scheme in ("http", "https"):
        request = ScopeRequest(scope(scheme=scheme), scope_headers(scope()["headers"]))
        response = SecurityMiddleware(lambda r: None).process_response(request, HttpResponse())
        added = dict(site_headers(request, 200, set()))
        assert added.get(b"Strict-Transport-Security") == (
            response["Strict-Transport-Security"].encode() if scheme == "https" else None
        )
    assert response["Strict-Transport-Security"] == "max-age=3600; preload"


def test_a_header_the_response_has_is_not_sent_twice():
    request = ScopeRequest(scope(), scope_headers(scope()["headers"]))
    added = dict(site_headers(request, 200, set()))
    assert b"X-Frame-Options" in added and b"Content-Security-Policy" in added
    kept = dict(site_headers(request, 200, {"x-frame-options"}))
    assert b"X-Frame-Options" not in kept and b"Content-Security-Policy" in kept


def test_the_headers_follow_a_changed_setting(settings):
    request = ScopeRequest(scope(), scope_headers(scope()["headers"]))
    assert dict(site_headers(request, 200, set()))[b"X-Frame-Options"] == b"DENY"
    settings.X_FRAME_OPTIONS = "SAMEORIGIN"
    assert dict(site_headers(request, 200, set()))[b"X-Frame-Options"] == b"SAMEORIGIN"


@pytest.mark.django_db(transaction=True)
def test_the_size_limit_is_the_same_one_check_either_way(settings):
    settings.INSPECTOR_UPSTREAM_ANTHROPIC = "http://127.0.0.1:9"  # never reached: too large
    settings.INSPECTOR = {**getattr(settings, "INSPECTOR", {}), "PROXY_MAX_REQUEST_BYTES": 64}
    large = b'{"pad": "' + b"x" * 100 + b'"}'
    for cookie in (False, True):
        status, _, body = served(cookie=cookie, body=large)
        assert status == 413 and b"64-byte limit" in body, cookie
    # A Content-Length over the limit is refused though the bytes that came are few.
    declared = [(b"content-length", b"100000")]
    status, _, body = served(cookie=False, body=b"{}", headers=declared)
    assert status == 413 and b"64-byte limit" in body


def test_the_route_cache_follows_the_url_configuration(settings):
    """`relay_route` resolves a path once, then answers from its cache: a changed
    ROOT_URLCONF empties it, so a path no longer routed to the relay goes to Django."""
    assert fast()
    settings.ROOT_URLCONF = "tests.capture.no_proxy_urls"
    assert not fast()
    settings.ROOT_URLCONF = "inspector.urls"
    assert fast()
