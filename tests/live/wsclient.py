"""A minimal asyncio websocket client (RFC 6455: text frames, ping, close) for tests and
the live benchmark, talking to a real daphne. Nothing beyond the standard library."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import struct
from typing import Any
from urllib.parse import urlsplit

TEXT, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x8, 0x9, 0xA, 0x0


class HandshakeRefused(ConnectionError):
    pass


class WebSocket:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.closed = False

    async def send_text(self, text: str) -> None:
        payload = text.encode("utf-8")
        await self._send_frame(TEXT, payload)

    async def send_json(self, value: Any) -> None:
        await self.send_text(json.dumps(value))

    async def _send_frame(self, opcode: int, payload: bytes) -> None:
        header = bytes([0x80 | opcode])
        size = len(payload)
        if size < 126:
            header += bytes([0x80 | size])
        elif size < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", size)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", size)
        mask = os.urandom(4)
        repeated = (mask * (size // 4 + 1))[:size]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
            size, "big"
        )
        self.writer.write(header + mask + masked)
        await self.writer.drain()

    async def recv(self) -> str | None:
        """The next text message, or None once the server closed the connection."""
        parts: list[bytes] = []
        while True:
            try:
                first, second = await self.reader.readexactly(2)
            except (asyncio.IncompleteReadError, ConnectionError):
                self.closed = True
                return None
            opcode = first & 0x0F
            size = second & 0x7F
            if size == 126:
                (size,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif size == 127:
                (size,) = struct.unpack("!Q", await self.reader.readexactly(8))
            payload = await self.reader.readexactly(size)
            if opcode == PING:
                await self._send_frame(PONG, payload)
                continue
            if opcode == CLOSE:
                self.closed = True
                return None
            if opcode in (TEXT, CONTINUATION):
                parts.append(payload)
                if first & 0x80:
                    return b"".join(parts).decode("utf-8")

    async def recv_json(self, timeout: float = 10.0) -> Any:
        text = await asyncio.wait_for(self.recv(), timeout)
        return None if text is None else json.loads(text)

    async def recv_messages(self, timeout: float = 10.0) -> list[Any] | None:
        """The messages of one viewer frame (one JSON object per line); None once closed."""
        text = await asyncio.wait_for(self.recv(), timeout)
        return None if text is None else [json.loads(line) for line in text.splitlines()]

    async def close(self) -> None:
        if not self.closed:
            with contextlib.suppress(ConnectionError):
                await self._send_frame(CLOSE, struct.pack("!H", 1000))
        self.closed = True
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


async def connect(url: str, *, origin: str | None = None, timeout: float = 10.0) -> WebSocket:
    """Open `ws://host:port/path?query`; the Origin defaults to the server itself."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    request = (
        f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Origin: {origin or f'http://{host}:{port}'}\r\n\r\n"
    )
    writer.write(request.encode("latin-1"))
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    status = head.split(b"\r\n", 1)[0]
    if b" 101 " not in status + b" ":
        writer.close()
        raise HandshakeRefused(status.decode("latin-1"))
    return WebSocket(reader, writer)
