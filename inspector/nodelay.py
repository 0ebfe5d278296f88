"""Turn Nagle's algorithm off on daphne's connections (TCP_NODELAY).

Twisted leaves it on. A streamed response (the recording proxy's server-sent events) is
written as many small writes, and with Nagle on each write after the first waits for the
client's delayed ACK: about 40 ms per event on Linux, which would hold back the client's
tokens. Every other server in the path (httpx, asyncio) already sets TCP_NODELAY.
"""

from __future__ import annotations

import contextlib


def enable() -> None:
    try:
        from twisted.web import http
    except ImportError:  # not served by daphne
        return
    channel = http.HTTPChannel
    if getattr(channel, "_loop_inspector_nodelay", False):
        return
    original = channel.connectionMade

    def connection_made(self) -> None:
        original(self)
        with contextlib.suppress(Exception):  # not a TCP transport (UNIX sockets)
            self.transport.setTcpNoDelay(True)

    channel.connectionMade = connection_made
    channel._loop_inspector_nodelay = True
