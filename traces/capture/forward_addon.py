"""The mitmproxy addon of the forward proxy (`loop-inspector proxy --forward`).

mitmdump loads this file as a script, in its own environment (mitmproxy 11 cannot share
our venv: it pins asgiref and cryptography below what channels and daphne need). So it
imports the standard library only (and its sibling modules `forward_direct`,
`forward_exchange`, `forward_handover`, which do the same) and never Django; mitmproxy
hands its objects to the hooks. `traces.capture.forward_proxy` imports it for
`VENDOR_HOSTS` and `allow_patterns`, so the hosts intercepted and the hosts routed are
one table.

A request to a known vendor host goes in one hop: straight to the upstream the reverse
proxy would pick (the server's INSPECTOR_UPSTREAM_*, read once when the forward proxy
starts: `forward_direct.Routes`), its answer streamed to the client untouched while a
copy is kept (`Copy`, as `flow.response.stream`). Once the answer's last byte is the
client's (or the exchange broke off), the exchange goes to Loop Inspector on loopback
(`forward_handover`), credentials masked, and is recorded there by the reverse proxy's
own code (`traces.capture.forwarded`). A call the one hop does not take (no routes: the
server refused our token or could not be asked; a refusal the reverse proxy words; a
path it would re-escape) goes as before in two hops, as plain HTTP to the reverse proxy
(`/proxy/s/<session>/<vendor>/<path>`), which records it and sends it on. Every other
host is left out of `allow_hosts`, so mitmproxy tunnels its bytes untouched: its TLS is
not intercepted and nothing of it is recorded.

On a shared server recording needs an API token of `ingest` scope, which the agent knows
nothing of: it comes in mitmdump's environment (TOKEN_VARIABLE, never its command line,
which any local user can read) and goes only to Loop Inspector (with the hand-overs, or
on the requests sent to the reverse proxy, which drops it before the upstream), never to
an upstream or a tunnelled host.
"""

from __future__ import annotations

import os
import re
import time
from types import MappingProxyType
from typing import Any
from urllib.parse import quote, urlsplit

try:  # mitmdump's script loader has this folder on sys.path while the script loads
    from forward_direct import Routes  # type: ignore[import-not-found]
    from forward_exchange import (  # type: ignore[import-not-found]
        CLIENT_LEFT,
        COMPLETED,
        UPSTREAM_BROKE_OFF,
        UPSTREAM_UNREACHABLE,
        encode,
    )
    from forward_handover import Handover  # type: ignore[import-not-found]
except ImportError:
    from traces.capture.forward_direct import Routes
    from traces.capture.forward_exchange import (
        CLIENT_LEFT,
        COMPLETED,
        UPSTREAM_BROKE_OFF,
        UPSTREAM_UNREACHABLE,
        encode,
    )
    from traces.capture.forward_handover import Handover

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


CALL = "loop_inspector_call"
"""The flow metadata key of a direct call's (vendor, session, path, masked headers)."""
DIRECT = "loop_inspector_direct"
"""The flow metadata key of a call sent straight to its upstream: its `Copy`."""
SESSION_HEADER = "X-Loop-Inspector-Session"
NOT_SENT_ON = ("cookie", SESSION_HEADER, TOKEN_HEADER)
"""Request headers the upstream never gets, as the reverse proxy drops them (its
DROP_REQUEST_HEADERS): this site's cookies, our session and token headers."""
FLUSH_SECONDS = 8.0
"""How long a stopping mitmdump waits for its queued hand-overs (the forward proxy's
owner waits 10 s for it to exit)."""


class Copy:
    """The response body's copy, kept as `flow.response.stream` passes each chunk on to
    the client unchanged and at once; up to the recording limit, as the reverse proxy's
    `ExchangeRecording.keep` keeps it (whole chunks; `truncated_at` past the limit)."""

    def __init__(self, limit: int, started_at: float) -> None:
        self.limit = limit
        self.started_at = started_at
        self.parts: list[bytes] = []
        self.size = 0
        self.truncated_at: int | None = None
        self.handed = False

    def __call__(self, chunk: bytes) -> bytes:
        if chunk and self.truncated_at is None:
            if self.size + len(chunk) > self.limit:
                self.truncated_at = self.size
            else:
                self.parts.append(chunk)
                self.size += len(chunk)
        return chunk

    def body(self) -> bytes:
        return b"".join(self.parts)


class ForwardToInspector:
    """Sends the vendor hosts' calls to their upstream (or to the reverse proxy), streams
    their answers, and hands each finished exchange to Loop Inspector."""

    def __init__(self) -> None:
        self.routes: Routes | None = None
        self.handover: Handover | None = None

    def load(self, loader: Any) -> None:
        loader.add_option(
            "inspector_server", str, "", "The Loop Inspector's base URL (http://127.0.0.1:…)."
        )
        loader.add_option("inspector_session", str, "", "The session the calls record into.")
        loader.add_option(
            "inspector_routes",
            str,
            "",
            "The server's routes file (forward_direct.Routes): calls go to their upstream "
            "in one hop; empty: every call goes through the reverse proxy.",
        )

    def configure(self, updated: Any) -> None:
        from mitmproxy import ctx

        if "inspector_routes" in updated or "inspector_server" in updated:
            self.routes = Routes.load(ctx.options.inspector_routes)
            if self.handover is not None:
                self.handover.close(FLUSH_SECONDS)
            self.handover = Handover(
                ctx.options.inspector_server, os.environ.get(TOKEN_VARIABLE, ""), self.refused
            )

    def refused(self) -> None:
        """The server no longer takes our hand-overs: two hops from now on."""
        self.routes = None

    def done(self) -> None:
        if self.handover is not None:
            self.handover.close(FLUSH_SECONDS)

    def request(self, flow: Any) -> None:
        from mitmproxy import ctx  # mitmproxy's own environment, at run time only

        request = flow.request
        route = vendor_route(str(request.host), request.path)
        if route is None or request.scheme != "https" or not ctx.options.inspector_server:
            return
        vendor, path = route
        if self._direct(flow, vendor, path, ctx.options.inspector_session):
            return
        server = urlsplit(ctx.options.inspector_server)
        flow.metadata[ROUTED] = vendor
        request.path = routed_path(vendor, ctx.options.inspector_session, path)
        request.scheme = server.scheme or "http"
        request.host = server.hostname or "127.0.0.1"
        request.port = server.port or (443 if server.scheme == "https" else 80)
        token = os.environ.get(TOKEN_VARIABLE, "")
        if token:
            request.headers[TOKEN_HEADER] = token

    def _direct(self, flow: Any, vendor: str, path: str, session_option: str) -> bool:
        """Send the call to its upstream itself, when the routes say where."""
        routes = self.routes
        if routes is None:
            return False
        request = flow.request
        headers = request.headers
        session = routes.session_of(session_option, headers.get(SESSION_HEADER, ""))
        if session is None:
            return False
        lookup = {
            "content-length": headers.get("content-length", ""),
            "authorization": headers.get("authorization", ""),
        }
        size = len(request.raw_content or b"")
        target = routes.target(vendor, str(request.host), request.method, path, size, lookup)
        if target is None:
            return False
        copy = Copy(routes.max_response_bytes, time.time())
        flow.metadata[DIRECT] = copy
        flow.metadata[ROUTED] = vendor
        flow.metadata[CALL] = (
            vendor,
            session,
            path,
            routes.secrets.masked_headers(_pairs(headers)),
        )
        for name in NOT_SENT_ON:
            headers.pop(name, None)
        headers["accept-encoding"] = (
            "identity"  # as the reverse proxy asks: the copy is read as it is
        )
        request.scheme = target.scheme
        request.host = target.host
        request.port = target.port
        request.path = target.path
        request.host_header = target.host_header
        return True

    def responseheaders(self, flow: Any) -> None:
        """Server-sent events (and AWS event frames) reach the client as they arrive,
        not once the body ends; a direct call's chunks are copied on the way."""
        if ROUTED in flow.metadata and flow.response is not None:
            flow.response.stream = flow.metadata.get(DIRECT, True)

    def response(self, flow: Any) -> None:
        """The answer's last byte is the client's: hand the exchange over."""
        if DIRECT in flow.metadata:
            self._hand_over(flow, COMPLETED, None)

    def error(self, flow: Any) -> None:
        """The client hung up, or the upstream could not be reached or broke off."""
        if DIRECT not in flow.metadata:
            return
        message = str(flow.error.msg if flow.error is not None else "")
        if message.startswith("Client disconnected"):
            ended = CLIENT_LEFT
        elif flow.response is None:
            ended = UPSTREAM_UNREACHABLE
        else:
            ended = UPSTREAM_BROKE_OFF
        self._hand_over(flow, ended, message[:200])

    def _hand_over(self, flow: Any, ended: str, detail: str | None) -> None:
        copy: Copy = flow.metadata[DIRECT]
        routes, handover = self.routes, self.handover
        if copy.handed or handover is None:
            return
        copy.handed = True
        if routes is None or flow.request.method != "POST":
            return  # refused meanwhile; or a GET, DELETE: never recorded (`recorded_format`)
        vendor, session, path, request_headers = flow.metadata[CALL]
        secrets = routes.secrets
        raw, _, query = path.partition("?")
        response = flow.response
        meta = {
            "vendor": vendor,
            "session": session,
            "method": flow.request.method,
            "path": raw + ("?" + secrets.masked_query(query) if query else ""),
            "headers": request_headers,
            "started_at": copy.started_at,
            "ended_at": time.time(),
            "status": None if response is None else response.status_code,
            "response_headers": (
                [] if response is None else secrets.masked_headers(_pairs(response.headers))
            ),
            "ended": ended,
            "detail": detail,
            "truncated_at": copy.truncated_at,
        }
        handover.send(encode(meta, flow.request.raw_content or b"", copy.body()), vendor)


def _pairs(headers: Any) -> list[tuple[str, str]]:
    """mitmproxy's headers as (name, value) pairs, every repeat kept, as sent."""
    return [(k, v) for k, v in headers.items(multi=True)]


addons = [ForwardToInspector()]
