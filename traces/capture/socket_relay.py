"""The recording proxy for the Responses API's WebSocket mode (`…/openai/v1/responses`).

With `OPENAI_BASE_URL` pointing at the proxy, the Codex CLI opens this socket before
anything else (it is its default transport), as does the OpenAI SDK's
`responses.connect()`. The socket is relayed frame by frame to the upstream's own
(INSPECTOR_UPSTREAM_OPENAI, as ws:// or wss://), and each `response.create` with the
events that answer it is recorded as the streamed HTTP call it stands for
(`core.reading.socket_capture`), through the same per-session writer as the HTTP relay.

When the upstream refuses the socket (a server without the WebSocket mode, such as vLLM
or Ollama) or cannot be reached, the client's handshake is refused with `426 Upgrade
Required` (through daphne's denial extension, `inspector.daphne_denial`): Codex takes that
status, and no other, as "no WebSocket here" and goes on over HTTP at once, which the
proxy relays as usual (a 403 it retried with backoff for 6.5 s first).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import orjson
import websockets
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from websockets.asyncio.client import ClientConnection, connect

from traces.access.rules import Access, access, ingest_project_of, rate_limited
from traces.capture import proxy
from traces.capture.recording import schedule_recording
from traces.conf import inspector_settings
from traces.core.reading.capture import CLIENT_LEFT as LEFT
from traces.core.reading.capture import UPSTREAM_BROKE_OFF, upstream_url
from traces.core.reading.socket_capture import SocketRecorder

log = logging.getLogger(__name__)

FORMAT = "openai-responses"
HANDSHAKE_HEADERS = frozenset(
    {
        "upgrade",
        "connection",
        "origin",
        "accept-encoding",
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-extensions",
        "sec-websocket-protocol",
    }
)
"""The client's handshake with this server: the upstream handshake makes its own."""
CLIENT_LEFT = "the client closed the socket mid-response"
USE_HTTP = 4426
"""The refusal that means "no WebSocket mode upstream: use HTTP" (sent as a 426)."""
DENIAL = "websocket.http.response"


def client_close_code(upstream_code: int) -> int:
    """The code to close the client's socket with when the upstream closed its own.
    daphne sends only 1000 and 3000-4999: the protocol's other codes (1001-1015: going
    away, internal error…) are passed on as 4000 + the code's last three digits (1011 is
    4011), so the client still learns which it was; anything else is a plain 1000."""
    if upstream_code == 1000 or 3000 <= upstream_code <= 4999:
        return upstream_code
    if 1000 < upstream_code < 2000:
        return 4000 + upstream_code - 1000
    return 1000


@access(Access.INGEST)
class ResponsesSocketRelay(AsyncWebsocketConsumer):
    """One client socket, relayed to one upstream socket and recorded."""

    upstream: ClientConnection | None = None
    pump: asyncio.Task[None] | None = None
    recorder: SocketRecorder | None = None

    async def connect(self) -> None:
        refusal = await self._open_upstream()
        if refusal is not None:
            await self._refuse(refusal)
            return
        await self.accept()
        self.pump = asyncio.ensure_future(self._from_upstream())
        self.pump.add_done_callback(_log_failure)

    async def _refuse(self, code: int) -> None:
        """Refuse the handshake: "use HTTP" as a 426 where the server takes an app's
        status (daphne, patched), else (and for every other refusal) as a close before
        accept, which servers answer 403."""
        if code == USE_HTTP and DENIAL in self.scope.get("extensions", {}):
            await self.send_denial(426, "The upstream has no Responses WebSocket mode: use HTTP.")
            return
        await self.close(code=code)

    async def send_denial(self, status: int, message: str) -> None:
        body = orjson.dumps({"error": {"message": f"Loop Inspector proxy: {message}"}})
        await self.base_send(
            {
                "type": f"{DENIAL}.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await self.base_send({"type": f"{DENIAL}.body", "body": body})

    async def _open_upstream(self) -> int | None:
        """Connect upstream; None when connected, else the close code that says why not."""
        base = proxy.upstream_base("openai")
        if not base:
            return 4404
        headers = proxy.scope_headers(self.scope.get("headers", []))
        session = proxy.session_name(self.scope["url_route"]["kwargs"].get("session"), headers)
        if session is None:
            return 4400
        who = self.scope.get("principal")
        project = await database_sync_to_async(ingest_project_of)(who)
        if project is None:
            return 4403
        sent = {
            name: value
            for name, value in proxy.outgoing_headers(headers).items()
            if name.lower() not in HANDSHAKE_HEADERS
        }
        query = self.scope.get("query_string", b"").decode("utf-8", "surrogateescape")
        http_url = upstream_url(base, "responses", query)
        limit = int(inspector_settings()["PROXY_MAX_RESPONSE_BYTES"])
        try:
            self.upstream = await connect(
                "ws" + http_url.removeprefix("http"),  # http -> ws, https -> wss
                additional_headers=list(sent.items()),
                user_agent_header=None,  # the client's own, if it sent one
                max_size=limit,
                open_timeout=float(inspector_settings()["PROXY_CONNECT_TIMEOUT"]),
                ping_interval=None,  # the client keeps the socket alive, or not
            )
        except websockets.InvalidStatus as exc:
            log.info("upstream refused the Responses socket (%s)", exc.response.status_code)
            return USE_HTTP
        except (OSError, TimeoutError, websockets.InvalidHandshake, websockets.InvalidURI) as exc:
            # The class only: the message may hold the URL, and its query a key.
            log.info("could not open the Responses socket upstream (%s)", type(exc).__name__)
            return USE_HTTP
        self.session, self.project = session, project
        self.token_id = who.token.pk if who is not None and who.token is not None else None
        self.recorder = SocketRecorder(http_url, sent, limit)
        return None

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        upstream, recorder = self.upstream, self.recorder
        if upstream is None or recorder is None:
            return
        if not await self.still_allowed():  # closed; `disconnect` closes upstream
            return
        if text_data is None:
            with contextlib.suppress(websockets.ConnectionClosed):
                await upstream.send(bytes_data or b"")
            return
        opened = recorder.client_frame(text_data, time.time())
        if opened and self.token_id is not None:
            wait = await database_sync_to_async(rate_limited)(
                self.token_id, Access.INGEST, "POST", len(text_data)
            )
            if wait:
                recorder.discard_last()
                await self.send(text_data=_rate_limit_event(wait))
                return
        # A closed upstream: `_from_upstream` sees the close and closes this socket.
        with contextlib.suppress(websockets.ConnectionClosed):
            await upstream.send(text_data)

    async def _from_upstream(self) -> None:
        upstream, recorder = self.upstream, self.recorder
        assert upstream is not None and recorder is not None
        code = 1000
        try:
            async for message in upstream:
                if not await self._to_client(message):
                    # The client is going away: `disconnect` follows and closes upstream.
                    self._record_open(CLIENT_LEFT, LEFT)
                    return
                if isinstance(message, str):
                    line = recorder.server_frame(message, time.time())
                    if line is not None:
                        schedule_recording(FORMAT, self.session, line, self.project)
            code = upstream.close_code or 1000
        except websockets.ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd is not None else 1011
        except Exception:
            log.exception("the Responses socket relay failed")
            code = 1011
        self._record_open("the upstream closed the socket mid-response", UPSTREAM_BROKE_OFF)
        await self.close(code=client_close_code(code))

    async def _to_client(self, message: str | bytes) -> bool:
        """Send one message on; False when the client's socket is already closing (the
        client hung up while the upstream was still answering)."""
        try:
            if isinstance(message, bytes):
                await self.send(bytes_data=message)
            else:
                await self.send(text_data=message)
        except Exception:  # autobahn's Disconnected: no sending on a closing socket
            return False
        # Let daphne write it out now. Events that are already here are read without a
        # pause, and daphne's write waits for one: without it a whole response went out
        # at once, after the last event and next to the start of its recording (the
        # first event's added p95 was 5.8 ms, now 1.6 ms).
        await asyncio.sleep(0)
        return True

    async def disconnect(self, code: int) -> None:
        if self.pump is not None:
            self.pump.cancel()
        if self.upstream is not None:
            await self.upstream.close()
        self._record_open(CLIENT_LEFT, LEFT)

    def _record_open(self, problem: str, outcome: str) -> None:
        if self.recorder is None:
            return
        for line in self.recorder.close(time.time(), problem, outcome):
            schedule_recording(FORMAT, self.session, line, self.project)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("the Responses socket relay failed", exc_info=task.exception())


def _rate_limit_event(wait: int) -> str:
    """An `error` event in the Responses API's shape, which the SDKs raise on."""
    message = f"Loop Inspector proxy: rate limit of this API token reached: retry in {wait} s."
    event = {
        "type": "error",
        "error": {"type": "rate_limit_error", "code": "rate_limit_exceeded", "message": message},
    }
    return orjson.dumps(event).decode()
