"""Bedrock InvokeModel / InvokeModelWithResponseStream for Anthropic models: Messages
bodies in AWS's envelope.

InvokeModel passes the model's own request and response through: for Claude, an
Anthropic Messages request (`anthropic_version: "bedrock-2023-05-31"`, the model in the
URL) and a Messages response, read by `dialects.anthropic` as they are. The streamed
answer is an AWS event stream whose `chunk` events each carry one Anthropic stream event
as base64 JSON (`{"bytes": "…"}`); they are decoded and folded by the same
`anthropic.assemble_events` a server-sent stream goes through. The last event
(`message_stop`) carries `amazon-bedrock-invocationMetrics`, kept on the message. An
exception frame (`:message-type: exception`) or AWS's JSON error (`{"message"}`) is the
call's API error, as for Converse (`dialects.bedrock`).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from ...model import Message, Usage
from . import anthropic, bedrock
from .base import Assembled, Reply

METRICS_KEY = "amazon-bedrock-invocationMetrics"
"""What Bedrock adds to an Anthropic stream's `message_stop`: its own token counts and
latencies (kept in the call's extra, next to the model's usage)."""


def normalize_message(raw: Any) -> Message:
    return anthropic.normalize_message(raw)


def read_response(body: dict[str, Any], messages: Sequence[Any] = ()) -> Reply | None:
    return anthropic.read_response(body, messages)


def usage_from(raw: Any) -> Usage | None:
    return anthropic.usage_from(raw)


def error_text(body: Any) -> str | None:
    """An Anthropic error body, AWS's `{"message"}` error, or a stream's exception frame."""
    return anthropic.error_text(body) or bedrock.error_text(body)


def assemble_stream(text: str) -> Assembled:
    """InvokeModelWithResponseStream is binary: a text stream means the body was mangled."""
    return None, "the response is text, not a Bedrock event stream"


def assemble_pieces(body: list[Any]) -> Assembled | None:
    """An InvokeModelWithResponseStream response: its decoded event-stream frames."""
    return assemble_chunks(body) if bedrock.is_event_list(body) else None


def assemble_chunks(frames: Sequence[Any]) -> Assembled:
    """The frames' Anthropic events folded into one Messages response.

    An exception frame makes the call failed with that exception (as ConverseStream's);
    a damaged or cut stream keeps what arrived and says so."""
    problems: list[str] = []
    metrics: list[Any] = []
    for frame in frames:
        kind, payload = bedrock.event_of(frame)
        if kind == "exception":
            return payload, None
        if kind == "truncated" and isinstance(frame, dict):
            problems.append(str(frame.get("truncated")))
    message, error = anthropic.assemble_events(_events(frames, problems, metrics))
    if isinstance(message, dict) and metrics:
        message[METRICS_KEY] = metrics[-1]
    if problems:
        error = problems[0]
    return message, error


def _events(
    frames: Sequence[Any], problems: list[str], metrics: list[Any]
) -> Iterator[tuple[str | None, Any]]:
    """(event type, event) of each `chunk` frame; a chunk that is not base64 JSON is a
    problem (noted, not a crash), and message_stop's invocation metrics are collected."""
    for number, frame in enumerate(frames, start=1):
        kind, payload = bedrock.event_of(frame)
        if kind != "chunk":
            continue
        data = _chunk(payload)
        if data is None:
            problems.append(f"event-stream frame {number} holds no Anthropic event")
            continue
        if data.get("type") == "message_stop" and data.get(METRICS_KEY) is not None:
            metrics.append(data[METRICS_KEY])
        yield str(data.get("type") or ""), data


def _chunk(payload: Any) -> dict[str, Any] | None:
    """One chunk's event: `{"bytes": base64 of its JSON}` (boto3 hands over raw bytes)."""
    raw = payload.get("bytes") if isinstance(payload, dict) else None
    try:
        data = raw if isinstance(raw, bytes) else base64.b64decode(str(raw), validate=True)
        value = orjson.loads(data)
    except ValueError:  # binascii.Error and orjson.JSONDecodeError are ValueErrors
        return None
    return value if isinstance(value, dict) else None
