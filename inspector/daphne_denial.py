"""Daphne taught ASGI's WebSocket Denial Response (`websocket.http.response`): an app may
refuse a handshake with the HTTP status it chooses, not only the 403 daphne 4.2 sends.

The recording proxy's Responses socket needs it: when the upstream has no WebSocket mode,
the Codex CLI falls back to HTTP at once on `426 Upgrade Required` (codex-rs,
`ModelClientSession::stream_responses_websocket`), while a 403 is an error it retries
with backoff (7 times, 6.5 s) before it falls back (issue 23). The extension is
announced in the scope as the ASGI spec says (`scope["extensions"]`), so an app (and the
test communicator, which lacks it) knows whether it may send the denial.
"""

from __future__ import annotations

from http import HTTPStatus

DENIAL = "websocket.http.response"


def patch_daphne_denial() -> None:
    """Install the extension (the body of a denial is not sent: autobahn sends the
    status line alone) on daphne's classes (once; no-op without daphne)."""
    try:
        from autobahn.websocket.types import ConnectionDeny
        from daphne.server import Server
        from daphne.ws_protocol import WebSocketProtocol
    except ImportError:
        return
    if getattr(WebSocketProtocol, "_inspector_denial", False):
        return
    create_application = Server.create_application
    handle_reply = WebSocketProtocol.handle_reply

    def create(self, protocol, scope):
        if scope.get("type") == "websocket":
            scope.setdefault("extensions", {})[DENIAL] = {}
        return create_application(self, protocol, scope)

    def reply(self, message):
        kind = message.get("type")
        if kind == f"{DENIAL}.start":
            self._inspector_denial_status = int(message.get("status", 403))
            return None
        if kind == f"{DENIAL}.body":
            if message.get("more_body", False) or not hasattr(self, "handshake_deferred"):
                return None
            status = getattr(self, "_inspector_denial_status", 403)
            # autobahn writes the reason into the status line: the status's own phrase.
            try:
                reason = HTTPStatus(status).phrase
            except ValueError:
                reason = "Refused"
            self.handshake_deferred.errback(ConnectionDeny(code=status, reason=reason))
            del self.handshake_deferred
            self.server.protocol_disconnected(self)
            return None
        return handle_reply(self, message)

    Server.create_application = create
    WebSocketProtocol.handle_reply = reply
    WebSocketProtocol._inspector_denial = True
