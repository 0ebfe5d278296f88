"""`/mcp` on the web server: the MCP server over streamable HTTP, mounted in the ASGI app.

The SDK's transport runs statelessly, one server run per request answered as JSON (no
session to keep between requests or processes, so any daphne of a deployment answers any
request). Before a request reaches it, the endpoint applies its declared rule, READ, as
the JSON API does: in shared mode an API token with read scope (`Authorization: Bearer
li_…` or `X-Loop-Inspector-Token`), refused with 401 (none, unknown, revoked, expired) or
403 (no read scope) and a JSON-RPC error body; a browser session is not read here (an
agent has none, and a page elsewhere cannot lend it one). In local mode, loopback clients
only. Either way a browser's request from another origin is refused (the SDK's own
DNS-rebinding check is replaced by this one, which knows the deployment's host names).
Each tool call then resolves the token again (traces.mcp_server.server).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import orjson
from channels.db import database_sync_to_async
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from traces.access.cross_site import LOCAL_ONLY, is_loopback, local_mode, websocket_origin_ok
from traces.access.decisions import ingest_decision
from traces.access.rules import TOKEN_HEADER, Access, our_token
from traces.mcp_server.server import build_server, header_secret

MCP_PATH = "/mcp"
REFUSED = -32001
"""The JSON-RPC error code of a refused request (the server-defined range)."""


def page_base(ctx: Context) -> str:
    """The site's address as this request reached it, to link a trace's page."""
    request = ctx.request_context.request
    base = getattr(request, "base_url", None)
    return str(base).rstrip("/") if base is not None else ""


def refusal(scope: dict[str, Any]) -> tuple[int, str, str] | None:
    """(status, message, denied rule) when the request may not use the endpoint, else None."""
    headers = dict(scope.get("headers") or [])
    client = (scope.get("client") or [None])[0]
    if local_mode() and client is not None and not is_loopback(client):
        return 403, LOCAL_ONLY, "local-only"
    if not websocket_origin_ok(headers):
        return 403, "Refused: the request comes from another origin.", "cross-site"
    secret = our_token(
        headers.get(b"authorization", b"").decode("latin-1"),
        headers.get(TOKEN_HEADER.lower().encode(), b"").decode("latin-1") or None,
    )
    refused = ingest_decision(Access.READ, secret).refusal
    if refused is None:
        return None
    status, message = refused
    if status == 401 and secret is None:
        message = "Send an API token with read scope: 'Authorization: Bearer li_…'."
    return status, message, Access.READ.value


class McpEndpoint:
    """ASGI middleware: `/mcp` answered by the MCP server, every other request passed on."""

    access_rules = MappingProxyType({"*": Access.READ})
    """The endpoint's declared rule (read by `rules_of` and the permission matrix)."""

    def __init__(self, application: Any) -> None:
        self.application = application
        self._server: MCPServer | None = None

    def server(self) -> MCPServer:
        if self._server is None:
            self._server = build_server(header_secret, page_base)
        return self._server

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path not in (MCP_PATH, MCP_PATH + "/"):
            await self.application(scope, receive, send)
            return
        refused = await database_sync_to_async(refusal)(scope)
        if refused is not None:
            await _refuse(send, *refused)
            return
        server = self.server()
        # A fresh stateless manager per request: its task group lives as long as the
        # request, on whichever event loop serves it (daphne runs no ASGI lifespan).
        server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        manager = server.session_manager
        async with manager.run():
            await manager.handle_request({**scope, "path": MCP_PATH}, receive, send)


async def _refuse(send: Any, status: int, message: str, denied: str) -> None:
    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": REFUSED, "message": message}}
    )
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"x-access-denied", denied.encode()),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="loop-inspector"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
