"""A fake vendor API for the proxy tests and benchmark: a small local HTTP server that
replays responses recorded in ../shared/corpus (VCR cassettes, nock recordings), streamed
chunk by chunk with chunked transfer encoding like the real APIs, and errors on demand.

Each reply is chosen by a `responder(path, request_body) -> Reply`; every request it got
is kept (with its headers) so tests can check what the proxy forwarded.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from traces.core.reading.content_coding import decoded


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})
    chunks: list[bytes] = field(default_factory=list)
    delay: float = 0.0
    """Seconds to wait before each chunk after the first (a slow stream)."""
    hang: float = 0.0
    """Seconds to wait before answering at all (upstream timeouts)."""
    cut_after: int | None = None
    """Close the connection after this many chunks, without ending the body."""
    chunked: bool = False
    """Send the chunks one by one (chunked encoding) though the body is not an event
    stream: Gemini's JSON-array stream."""

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


def sse_chunks(text: str) -> list[bytes]:
    """A recorded event stream split at event boundaries, one chunk per event."""
    data = text.encode()
    parts = data.split(b"\n\n")
    chunks = [part + b"\n\n" for part in parts[:-1]]
    if parts[-1]:
        chunks.append(parts[-1])
    return [c for c in chunks if c]


def vcr_replies(path: Path) -> list[tuple[dict[str, Any], Reply]]:
    """(request body, reply) of each interaction of a VCR cassette."""
    document = yaml.safe_load(path.read_text())
    found = []
    for interaction in document["interactions"]:
        request = interaction["request"]
        response = interaction["response"]
        body = response["body"]["string"]
        headers = {k.lower(): v[0] for k, v in (response.get("headers") or {}).items()}
        content_type = headers.get("content-type", "application/json")
        if "event-stream" in content_type or body.lstrip().startswith(("event:", "data:")):
            chunks = sse_chunks(body)
            content_type = "text/event-stream; charset=utf-8"
        else:
            chunks = [body.encode()]
        request_body = json.loads(request["body"]) if request.get("body") else {}
        reply = Reply(response["status"]["code"], {"content-type": content_type}, chunks)
        found.append((request_body, reply))
    return found


def nock_reply(path: Path) -> Reply:
    """A nock recording `{status, headers, body}` as a reply."""
    recorded = json.loads(path.read_text())
    body = recorded["body"]
    text = body if isinstance(body, str) else json.dumps(body)
    headers = {k.lower(): v for k, v in (recorded.get("headers") or {}).items()}
    content_type = headers.get("content-type", "application/json")
    chunks = sse_chunks(text) if "event-stream" in content_type else [text.encode()]
    return Reply(recorded["status"], {"content-type": content_type}, chunks)


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # the default backlog of 5 refuses a burst of streams


class FakeUpstream:
    """`with FakeUpstream(responder) as upstream:` serves on `upstream.base`."""

    def __init__(self, responder: Callable[[str, bytes], Reply], port: int = 0) -> None:
        self.responder = responder
        self.received: list[Received] = []
        self.sent: list[bytes] = []
        self.first_byte_at: list[float] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()  # each event is sent at once, as the vendors' servers do
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                owner.received.append(Received(self.path, dict(self.headers.items()), body))
                # As the vendors do: a compressed request (the Codex CLI's zstd) is read.
                encoding = self.headers.get("content-encoding") or ""
                reply = owner.responder(self.path, decoded(body, encoding, 1 << 30))
                if reply.hang:
                    time.sleep(reply.hang)
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                streamed = "event-stream" in reply.headers.get("content-type", "")
                if streamed or reply.chunked or reply.cut_after is not None:
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    self._chunked(reply)
                else:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    owner.sent.append(reply.body)

            def _chunked(self, reply: Reply) -> None:
                sent = b""
                for number, chunk in enumerate(reply.chunks):
                    if reply.cut_after is not None and number >= reply.cut_after:
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        owner.sent.append(sent)
                        return
                    if number and reply.delay:
                        time.sleep(reply.delay)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                    sent += chunk
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                owner.sent.append(sent)

        self.server = _Server(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
