"""Daphne tuned for large uploads: Twisted must not parse form bodies, and the body limit
is enforced while the body streams in, not after it has all been buffered.

Daphne's requests are Twisted `http.Request`s, which by default parse every
`multipart/form-data` POST with Python's e-mail parser in the reactor thread before the
application sees it: a 100 MB upload of newlines took 78 s there (1.8 s as a raw body),
and every other request waited. Django parses the body itself, so that parse is turned
off. Twisted also buffers the whole body before handing the request on, so an oversized
upload is answered 413 as soon as its `Content-Length` (or, for chunked bodies, its byte
count) passes the limit, and the connection is closed. Websocket messages are limited
to the HTTP proxy's request size, with a close frame that says so (`websocket_limit`).
"""

from __future__ import annotations

import json
import logging

log = logging.getLogger(__name__)

MULTIPART_OVERHEAD = 1024 * 1024
"""Room for form fields and part headers on top of the file size limit."""


def body_limit() -> int:
    from traces.conf import inspector_settings

    return int(inspector_settings()["MAX_UPLOAD_BYTES"]) + MULTIPART_OVERHEAD


def too_large_response(limit: int) -> bytes:
    body = json.dumps(
        {
            "error": f"The request body is over the {limit:,}-byte limit; it was refused "
            "before being read (split the trace, or raise INSPECTOR['MAX_UPLOAD_BYTES'])."
        }
    ).encode()
    head = (
        "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    return head + body


def websocket_limit() -> int:
    """Bytes one websocket message may hold: the HTTP proxy's request limit, so a Codex
    `response.create` that the HTTP proxy takes is taken over the socket relay too."""
    from traces.conf import inspector_settings

    return int(inspector_settings()["PROXY_MAX_REQUEST_BYTES"])


def _patch_websocket_limits() -> None:
    """Daphne's websocket limits are 1 MiB, and autobahn drops the TCP connection of a
    message over them, with no close frame (issue 26). Here the limit is
    `websocket_limit()` for messages and frames, and a message over it gets a 1009
    ("message too big") close frame that says the limit."""
    from daphne.ws_protocol import WebSocketFactory

    original = WebSocketFactory.setProtocolOptions

    def set_protocol_options(self, *args, **options):
        if "maxMessagePayloadSize" in options:
            limit = websocket_limit()
            options |= {
                "maxMessagePayloadSize": limit,
                "maxFramePayloadSize": limit,
                "failByDrop": False,
            }
        return original(self, *args, **options)

    WebSocketFactory.setProtocolOptions = set_protocol_options


def patch_daphne() -> None:
    """Install these changes on Daphne's classes (once; no-op without Daphne)."""
    try:
        from daphne.http_protocol import WebRequest
        from twisted.web import http
    except ImportError:
        return
    if getattr(WebRequest, "_inspector_patched", False):
        return
    original_init = WebRequest.__init__

    def __init__(self, *args, **kwargs):
        kwargs["parsePOSTFormSubmission"] = False
        self._body_seen = 0
        self._body_refused = False
        original_init(self, *args, **kwargs)

    def refuse(self) -> None:
        self._body_refused = True
        limit = body_limit()
        log.warning("refused a request body over %d bytes", limit)
        self.channel.transport.write(too_large_response(limit))
        self.channel.transport.loseConnection()

    def gotLength(self, length):
        http.Request.gotLength(self, length)
        if length is not None and length > body_limit():
            refuse(self)

    def handleContentChunk(self, data):
        if self._body_refused:
            return
        self._body_seen += len(data)
        if self._body_seen > body_limit():
            refuse(self)
            return
        http.Request.handleContentChunk(self, data)

    def requestReceived(self, command, path, version):
        if self._body_refused:
            return
        http.Request.requestReceived(self, command, path, version)

    WebRequest.__init__ = __init__
    WebRequest.gotLength = gotLength
    WebRequest.handleContentChunk = handleContentChunk
    WebRequest.requestReceived = requestReceived
    WebRequest._inspector_patched = True
    _patch_websocket_limits()
    from inspector.log_masking import patch_access_log

    patch_access_log()
