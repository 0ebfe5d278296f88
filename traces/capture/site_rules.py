"""Django's own request checks and response headers, for the proxy's ASGI fast path.

The fast path (traces.capture.proxy_asgi) serves `/proxy/…` without Django's middleware
stack. What that stack would check and add is taken from Django itself, not written
again beside it: the host check is `HttpRequest.get_host` (ALLOWED_HOSTS, with
X-Forwarded-Host when USE_X_FORWARDED_HOST), the HTTPS redirect is
`SecurityMiddleware.process_request` (SECURE_SSL_REDIRECT and its exemptions), and the
headers a response gets are those `SecurityMiddleware`, `XFrameOptionsMiddleware` and
django-csp's `CSPMiddleware` put on it. Running those three on every response would cost
more than the relay (the policy is built anew each time), so their headers are built once
per path, scheme and status, on an empty response, and kept until a setting changes;
as in Django, a header the response already has (an upstream's `X-Frame-Options`, say)
is kept and not sent twice.
"""

from __future__ import annotations

import functools
from typing import Any

from csp.middleware import CSPMiddleware
from django.core.exceptions import DisallowedHost
from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponse
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.security import SecurityMiddleware

Headers = tuple[tuple[str, bytes, bytes], ...]
"""(lower-case name, name, value) of each header added."""


class ScopeRequest(HttpRequest):
    """What Django's checks read of a request (its META, path and scheme), from an ASGI
    scope and its headers as `proxy.scope_headers` names them (`Content-Type`).

    `HttpRequest.__init__` is not called (as Django's own WSGIRequest does not): its
    empty query dicts would cost more than the checks, which never read them."""

    def __init__(self, scope: dict[str, Any], headers: dict[str, str]) -> None:
        self.scope = scope
        self.resolver_match = None
        self.content_type = self.content_params = None
        self.path = self.path_info = scope["path"]
        self.method = scope["method"].upper()
        server = scope.get("server") or ("unknown", "0")
        meta = {"SERVER_NAME": server[0], "SERVER_PORT": str(server[1])}
        for name, value in headers.items():
            key = name.upper().replace("-", "_")
            meta[key if key in ("CONTENT_LENGTH", "CONTENT_TYPE") else f"HTTP_{key}"] = value
        self.META = meta

    def _get_scheme(self) -> str:
        return str(self.scope.get("scheme") or "http")


def _ignore(request: HttpRequest) -> HttpResponse:
    raise AssertionError("only the middleware's hooks are called")


@functools.cache
def _security() -> SecurityMiddleware:
    """Django's SecurityMiddleware, configured from the settings (made again when one
    changes: `_forget`)."""
    return SecurityMiddleware(_ignore)


def django_would_serve(request: ScopeRequest) -> bool:
    """Whether Django's stack lets the request through to the view: its host is allowed
    and no HTTPS redirect is due. (Otherwise Django answers it, with its own page.)"""
    try:
        request.get_host()
    except DisallowedHost:
        return False
    return _security().process_request(request) is None


def site_headers(
    request: ScopeRequest, status: int, present: set[str]
) -> list[tuple[bytes, bytes]]:
    """The headers Django's middleware adds to a response of `status` to `request`, but
    those the response has already (`present`: lower-case names)."""
    added = _added_headers(request.path_info, request.is_secure(), status)
    return [(name, value) for lower, name, value in added if lower not in present]


@functools.lru_cache(maxsize=512)
def _added_headers(path_info: str, secure: bool, status: int) -> Headers:
    blank = HttpRequest()
    blank.path = blank.path_info = path_info
    blank._get_scheme = lambda: "https" if secure else "http"  # type: ignore[method-assign]
    response = HttpResponse(status=status)
    before = set(response.headers)
    _security().process_response(blank, response)
    XFrameOptionsMiddleware(_ignore).process_response(blank, response)
    CSPMiddleware(_ignore).process_response(blank, response)
    return tuple(
        (name.lower(), name.encode("latin-1"), value.encode("latin-1"))
        for name, value in response.items()
        if name not in before
    )


def _forget(**kwargs: Any) -> None:
    _security.cache_clear()
    _added_headers.cache_clear()


setting_changed.connect(_forget)
