"""The ASGI handler runs Django's middleware hooks inline on the event loop: same answers
and headers as the sync path, fewer thread hops, and MIDDLEWARE keeps Django's paths."""

from __future__ import annotations

import asyncio

import pytest
from asgiref import sync
from django.conf import settings
from django.test import Client

from inspector.middleware import INLINE, InlineASGIHandler

SECURITY_HEADERS = (
    "X-Frame-Options",
    "Content-Security-Policy",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Cross-Origin-Opener-Policy",
)


def asgi_get(handler, path: str, method: str = "GET", headers=()) -> tuple[int, dict, int]:
    """(status, headers, thread hops) of one request through the ASGI handler."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    messages: list[dict] = []
    hops = 0
    original = sync.SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        nonlocal hops
        hops += 1
        return await original(self, *args, **kwargs)

    async def run() -> None:
        delivered = False

        async def receive():
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await asyncio.Event().wait()  # the client stays: no disconnect, until cancelled

        async def send(message):
            messages.append(message)

        await handler(scope, receive, send)

    sync.SyncToAsync.__call__ = counted
    try:
        asyncio.run(run())
    finally:
        sync.SyncToAsync.__call__ = original
    start = messages[0]
    found = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], found, hops


def test_middleware_setting_keeps_djangos_paths_for_the_deploy_checks():
    for path in INLINE:
        assert path in settings.MIDDLEWARE
    handler = InlineASGIHandler()
    assert handler is not None
    assert all(path in settings.MIDDLEWARE for path in INLINE)  # restored after loading


@pytest.mark.django_db(transaction=True)
def test_async_path_answers_with_the_same_headers_and_fewer_hops():
    handler = InlineASGIHandler()
    status, headers, hops = asgi_get(handler, "/proxy/nope/x")  # an async view
    reply = Client(HTTP_HOST="127.0.0.1").get("/proxy/nope/x")
    assert status == reply.status_code == 404
    for name in SECURITY_HEADERS:
        if reply.has_header(name):
            assert headers.get(name.lower()) == reply[name], name
    # Django's own handler hops to a thread twice per middleware hook (about 16 here);
    # inline, what is left is the request signals and the view's own access check.
    assert hops <= 6, hops


@pytest.mark.django_db(transaction=True)
def test_a_page_through_the_asgi_handler_keeps_its_security_headers():
    handler = InlineASGIHandler()
    status, headers, _ = asgi_get(handler, "/")
    assert status == 200
    assert "content-security-policy" in headers
    assert "x-frame-options" in headers
