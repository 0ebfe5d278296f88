"""The claim `anthropic_messages` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/anthropic_messages.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Detection
from . import best_claim

NAME = "anthropic-messages"
"""The name of the adapter whose `recognise` this is."""


def _recognise(value: Any) -> str | None:
    """Why this record looks like an Anthropic pair, or None."""
    if not isinstance(value, dict):
        return None
    request = value.get("request")
    response = value.get("response")
    if isinstance(request, dict):
        url = str(request.get("url") or request.get("uri") or "")
        if "/v1/messages" in url:
            return f"request URL {url.split('?')[0]} is the Anthropic Messages endpoint"
        body = request["body"] if isinstance(request.get("body"), dict) else request
        if isinstance(body.get("messages"), list) and _anthropic_response(response):
            return "request has 'messages' and the response is an Anthropic message"
    if "status" in value and isinstance(value.get("body"), str):
        text = value["body"]
        if '"type":"message"' in text.replace(" ", "") or "event: message_start" in text:
            return "a recorded HTTP response holding an Anthropic message"
    if value.get("type") == "message" and value.get("role") == "assistant":
        return "an Anthropic message object"
    return None


def _anthropic_response(response: Any) -> bool:
    if not isinstance(response, dict):
        return False
    body = response.get("body", response)
    if isinstance(body, dict) and body.get("type") in ("message", "error"):
        return True
    raw = response.get("body_raw")
    return isinstance(raw, str) and "message_start" in raw


def recognise(value: Any) -> Detection | None:
    reason = _recognise(value)
    return Detection(0.9, reason) if reason else None


def sniff(values: Sequence[Any]) -> Detection | None:
    return best_claim(recognise, values)
