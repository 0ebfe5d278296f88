"""The mitmproxy addon of the forward proxy (`loop-inspector proxy --forward`).

mitmdump loads this file as a script, in its own environment (mitmproxy 11 cannot share
our venv: it pins asgiref and cryptography below what channels and daphne need). So it
imports the standard library only and never our code or Django; mitmproxy hands its
objects to the hooks. `traces.capture.forward_proxy` imports it for `VENDOR_HOSTS` and
`allow_patterns`, so the hosts intercepted and the hosts routed are one table.

A request to a known vendor host is sent, as plain HTTP on loopback, to the Loop
Inspector's reverse proxy (`/proxy/s/<session>/<vendor>/<path>`): it is recorded exactly
as a call made through the reverse proxy is, by the same code, and goes on to the
upstream configured there (INSPECTOR_UPSTREAM_*). Every other host is left out of
`allow_hosts`, so mitmproxy tunnels its bytes untouched: its TLS is not intercepted and
nothing of it is recorded.

On a shared server the calls need an API token of `ingest` scope, which the agent knows
nothing of: it comes in mitmdump's environment (TOKEN_VARIABLE, never its command line,
which any local user can read) and is added to the requests sent to the reverse proxy
only (which drops it before the upstream), never to a tunnelled host's.
"""

from __future__ import annotations

import os
import re
from types import MappingProxyType
from typing import Any
from urllib.parse import quote, urlsplit

VENDOR_HOSTS = MappingProxyType(
    {
        "api.anthropic.com": "anthropic",
        "api.openai.com": "openai",
        "generativelanguage.googleapis.com": "gemini",
        "openrouter.ai": "openrouter",
    }
)
"""The hosts whose calls are recorded, and the reverse proxy's route for each; and
Bedrock Runtime's, one per region (`BEDROCK_HOST`)."""

BEDROCK_HOST = re.compile(r"bedrock-runtime\.([a-z]{2}(?:-[a-z]+)+-\d{1,2})\.amazonaws\.com")
"""Bedrock Runtime's host in each region. Its calls are signed (SigV4) for that host and
path: the region goes in the routed path, and the reverse proxy sends the call on with
the path and Host header it was signed for (`traces.capture.bedrock_route`), so the
signature stays valid; nothing is re-signed."""

TOKEN_VARIABLE = "LOOP_INSPECTOR_TOKEN"
TOKEN_HEADER = "X-Loop-Inspector-Token"
"""Our token's header (as `traces.access.rules.TOKEN_HEADER`: this file imports none of
our code)."""

ROUTED = "loop_inspector_vendor"
"""The flow metadata key marking a request sent to the reverse proxy."""


def allow_patterns() -> list[str]:
    """mitmproxy's `allow_hosts`: the vendor hosts on port 443, nothing else intercepted."""
    exact = [f"^{re.escape(host)}:443$" for host in VENDOR_HOSTS]
    return [*exact, f"^{BEDROCK_HOST.pattern}:443$"]


def vendor_route(host: str, path: str) -> tuple[str, str] | None:
    """(the reverse proxy's vendor, the path under its route) of a request to a known
    vendor host, or None for any other host. Bedrock's path starts with its region."""
    host = host.lower()
    vendor = VENDOR_HOSTS.get(host)
    if vendor is not None:
        return vendor, path
    bedrock = BEDROCK_HOST.fullmatch(host)
    if bedrock is not None:
        return "bedrock", f"/{bedrock.group(1)}" + (path if path.startswith("/") else "/" + path)
    return None


def routed_path(vendor: str, session: str, path: str) -> str:
    """The reverse proxy's path for a vendor request's path (with its query)."""
    prefix = f"/proxy/s/{quote(session, safe='')}/{vendor}" if session else f"/proxy/{vendor}"
    return prefix + (path if path.startswith("/") else "/" + path)


class ForwardToInspector:
    """Routes the vendor hosts' requests to the reverse proxy; streams their answers."""

    def load(self, loader: Any) -> None:
        loader.add_option(
            "inspector_server", str, "", "The Loop Inspector's base URL (http://127.0.0.1:…)."
        )
        loader.add_option("inspector_session", str, "", "The session the calls record into.")

    def request(self, flow: Any) -> None:
        from mitmproxy import ctx  # mitmproxy's own environment, at run time only

        request = flow.request
        route = vendor_route(str(request.host), request.path)
        if route is None or request.scheme != "https" or not ctx.options.inspector_server:
            return
        vendor, path = route
        server = urlsplit(ctx.options.inspector_server)
        flow.metadata[ROUTED] = vendor
        request.path = routed_path(vendor, ctx.options.inspector_session, path)
        request.scheme = server.scheme or "http"
        request.host = server.hostname or "127.0.0.1"
        request.port = server.port or (443 if server.scheme == "https" else 80)
        token = os.environ.get(TOKEN_VARIABLE, "")
        if token:
            request.headers[TOKEN_HEADER] = token

    def responseheaders(self, flow: Any) -> None:
        """Server-sent events (and AWS event frames) reach the client as they arrive,
        not once the body ends."""
        if ROUTED in flow.metadata and flow.response is not None:
            flow.response.stream = True


addons = [ForwardToInspector()]
