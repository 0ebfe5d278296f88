"""Decode one recorded HTTP body into JSON the adapters read, whatever shape the recorder
kept it in.

VCR cassettes hold bodies in several shapes: a YAML structure (`parsed_body`, pydantic-ai),
a JSON string, `!!binary` bytes (base64 in the file) that may be gzip- or
deflate-compressed (`Content-Encoding`), server-sent event text, or an AWS binary event
stream (`application/vnd.amazon.eventstream`, Bedrock's ConverseStream). Undoing the
transport here means a Bedrock or Gemini adapter never sees bytes; it sees what the
server meant.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from .content_coding import ContentCodingError, decoded
from .decompress import GZIP_MAGIC
from .limits import DEFAULT_LIMITS, InputRejected, Limits

EVENT_STREAM_TYPE = "application/vnd.amazon.eventstream"


def header(headers: Any, name: str) -> str:
    """One header's value (the first, for VCR's lists), matched without case; '' if absent."""
    if not isinstance(headers, dict):
        return ""
    wanted = name.lower()
    for key, value in headers.items():
        if str(key).lower() != wanted:
            continue
        if isinstance(value, list):
            value = value[0] if value else ""
        return text_of_header(value)
    return ""


def text_of_header(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def clean_headers(headers: Any) -> dict[str, Any]:
    """Headers with `!!binary` values as text, so they can be shown and stored as JSON."""
    if not isinstance(headers, dict):
        return {}
    cleaned: dict[str, Any] = {}
    for key, value in headers.items():
        if isinstance(value, list):
            cleaned[str(key)] = [text_of_header(v) if isinstance(v, bytes) else v for v in value]
        else:
            cleaned[str(key)] = text_of_header(value) if isinstance(value, bytes) else value
    return cleaned


def jsonable(value: Any) -> Any:
    """A YAML-loaded structure (`parsed_body`) made JSON-safe: YAML also has bytes
    (`!!binary`), dates and timestamps, which JSON storage refuses."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(value).decode("ascii")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def decode_body(body: Any, headers: Any = None, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The body as JSON where it is JSON, text where it is text (event streams included).

    Bytes are decompressed (gzip, deflate) and decoded; an AWS event stream becomes the
    list of its frames `{":event-type", ":message-type", "payload"}`. Bytes that are
    none of these become a line of text that says so (with the start in base64), which
    the adapters report as an unreadable body; the original file keeps every byte.
    """
    if isinstance(body, dict) and "string" in body and len(body) <= 2:
        body = body.get("string")
    if isinstance(body, bytes):
        body = _decode_bytes(body, headers, limits)
    if isinstance(body, str):
        stripped = body.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                return orjson.loads(body)
            except orjson.JSONDecodeError:
                return body
    return body


def _decode_bytes(data: bytes, headers: Any, limits: Limits) -> Any:
    encoding = header(headers, "content-encoding").lower()
    if data.startswith(GZIP_MAGIC) and "gzip" not in encoding:
        encoding = "gzip"  # gzipped, though the recorder kept no header saying so
    if encoding:
        try:
            data = decoded(data, encoding, limits.max_decompressed_bytes)
        except ContentCodingError as exc:
            if exc.problem == "too_large":
                raise InputRejected(
                    "A recorded body decompresses to more than "
                    f"{limits.max_decompressed_bytes:,} bytes; refused as a possible "
                    "decompression bomb."
                ) from None
            # Labelled compressed but is not, or a coding not undone here: kept as it is.
    if EVENT_STREAM_TYPE in header(headers, "content-type").lower() or _looks_like_frames(data):
        frames = aws_event_stream(data)
        if frames is not None:
            return frames
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        shown = base64.b64encode(data[:4096]).decode("ascii")
        return f"[binary body, {len(data):,} bytes, not text; base64 of the start] {shown}"


def _looks_like_frames(data: bytes) -> bool:
    """An AWS event-stream prelude: total length, then headers length, both big-endian."""
    if len(data) < 16:
        return False
    total = int.from_bytes(data[:4], "big")
    headers_length = int.from_bytes(data[4:8], "big")
    return 16 <= total <= len(data) and headers_length < total and data[8:9] != b"{"


def aws_event_stream(data: bytes) -> list[dict[str, Any]] | None:
    """The frames of an AWS binary event stream, or None when the bytes are not one.

    The framing (prelude, typed headers, two CRC32 checks) is read by botocore's own
    parser, the reference implementation, instead of a hand-written one. A stream cut
    short keeps the frames before the cut and ends with a `{"truncated": ...}` entry.
    """
    from botocore.eventstream import EventStreamBuffer, ParserError  # late: heavy import

    buffer = EventStreamBuffer()
    buffer.add_data(data)
    frames: list[dict[str, Any]] = []
    try:
        for message in buffer:
            frame: dict[str, Any] = {
                k: text_of_header(v) if isinstance(v, bytes) else v
                for k, v in message.headers.items()
            }
            frame["payload"] = _payload(message.payload)
            frames.append(frame)
    except ParserError as exc:
        if not frames:
            return None
        frames.append(
            {"truncated": f"the event stream is damaged after frame {len(frames)}: {exc}"}
        )
        return frames
    if not frames:
        return None
    if getattr(buffer, "_data", b""):
        frames.append({"truncated": f"the event stream is cut off after frame {len(frames)}"})
    return frames


def _payload(payload: bytes) -> Any:
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        return payload.decode("utf-8", "replace")
