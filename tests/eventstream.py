"""Write AWS event-stream frames for tests (botocore only reads them).

The frame layout, per AWS's specification: total length and headers length (big-endian
uint32), a CRC32 of those 8 bytes, headers (name length, name, type 7 = string, value
length, value), the payload, then a CRC32 of everything before it.
"""

from __future__ import annotations

import binascii
import struct

import orjson


def frame(event_type: str, payload: dict, message_type: str = "event") -> bytes:
    headers = {":message-type": message_type, ":content-type": "application/json"}
    if message_type == "exception":
        headers[":exception-type"] = event_type
    else:
        headers[":event-type"] = event_type
    encoded = b"".join(
        bytes([len(name)])
        + name.encode()
        + b"\x07"
        + struct.pack(">H", len(value))
        + value.encode()
        for name, value in headers.items()
    )
    body = orjson.dumps(payload)
    total = 12 + len(encoded) + len(body) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", binascii.crc32(prelude) & 0xFFFFFFFF)
    message = prelude + encoded + body
    return message + struct.pack(">I", binascii.crc32(message) & 0xFFFFFFFF)


def stream(*events: tuple[str, dict]) -> bytes:
    return b"".join(frame(kind, payload) for kind, payload in events)
