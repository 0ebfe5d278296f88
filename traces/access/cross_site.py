"""Cross-site protection in every mode: a web page on another origin cannot drive the API.

Local mode also answers loopback clients only (a server bound to another address by
mistake, with no login, must not serve the network).

Browsers mark their requests (`Sec-Fetch-Site`, `Origin`); curl, SDKs and agents send
neither, so they keep working unchanged. A page elsewhere can still *send* a no-cors
`fetch` to 127.0.0.1, which is why state-changing requests are refused here rather than
relying on CORS (which only hides the answer).
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.http.request import split_domain_port, validate_host

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAME_SITE_VALUES = frozenset({"same-origin", "none"})


LOCAL_ONLY = (
    "Refused: this Loop Inspector runs in local mode, which answers this machine only. "
    "To share it, turn on shared mode (INSPECTOR_AUTH=1; see the README, Shared deployment)."
)


def is_loopback(address: str | None) -> bool:
    try:
        ip = ipaddress.ip_address((address or "").split("%")[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def local_mode() -> bool:
    """No login: one person on loopback (the server also refuses cross-site requests).

    Defined here, the access module that reads no model, so the ASGI proxy path and the
    middleware can ask before the app registry is ready; `traces.access.rules` imports it."""
    return not getattr(settings, "INSPECTOR_AUTH", False)


def own_origin(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}".lower()


def cross_site_problem(request: HttpRequest) -> str | None:
    """Why a state-changing request looks like it came from another site, or None."""
    if request.method not in UNSAFE_METHODS:
        return None
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site.lower() not in SAME_SITE_VALUES:
        return f"the browser marked this request as coming from another site ({site})"
    origin = request.headers.get("Origin")
    if origin is not None:
        trusted = {o.lower() for o in getattr(settings, "CSRF_TRUSTED_ORIGINS", [])}
        if origin.lower() != own_origin(request) and origin.lower() not in trusted:
            return f"the request comes from another origin ({origin[:100]})"
    return None


class CrossSiteGuard:
    """Middleware: 403 for unsafe requests a browser sends from another site."""

    sync_capable = True
    async_capable = True  # async views (proxy, OTLP) stay on the event loop

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self._is_async = iscoroutinefunction(get_response)
        if self._is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest):
        if self._is_async:
            return self._acall(request)
        return self._refusal(request) or self.get_response(request)

    async def _acall(self, request: HttpRequest):
        return self._refusal(request) or await self.get_response(request)

    @staticmethod
    def _refusal(request: HttpRequest):
        if local_mode() and not is_loopback(request.META.get("REMOTE_ADDR")):
            # Bound to another address by mistake: no login, so nobody else gets in.
            response = JsonResponse({"error": LOCAL_ONLY}, status=403)
            response["X-Access-Denied"] = "local-only"
            return response
        problem = cross_site_problem(request)
        if problem:
            response = JsonResponse({"error": f"Refused: {problem}."}, status=403)
            response["X-Access-Denied"] = "cross-site"
            return response
        return None


def websocket_origin_ok(headers: dict[bytes, bytes]) -> bool:
    """A websocket handshake without Origin is an agent (browsers always send it); with
    one, it must be this server's own host and port, and that host must be allowed."""
    origin = headers.get(b"origin")
    if origin is None:
        return True
    host = headers.get(b"host", b"").decode("latin-1").lower()
    try:
        parsed = urlsplit(origin.decode("latin-1").lower())
    except ValueError:
        return False
    if parsed.scheme not in ("http", "https") or not host or parsed.netloc != host:
        return False
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


class SameOriginWebsocket:
    """ASGI middleware: refuse websocket handshakes from pages of another origin (any
    other port on localhost included, which Channels' own validator accepts)."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers", []))
        if scope["type"] == "websocket":
            client = (scope.get("client") or [None])[0]
            local_only = local_mode() and client is not None and not is_loopback(client)
            if local_only or not websocket_origin_ok(headers):
                return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
