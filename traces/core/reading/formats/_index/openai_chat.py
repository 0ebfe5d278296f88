"""The claim `openai_chat` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/openai_chat.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...dialects import openai_chat as chat
from ..base import Detection
from ..http_record import compact_text, is_nock, read_request, request_url
from . import best_claim

NAME = "openai-chat"
"""The name of the adapter whose `recognise` this is."""


def _recognise(value: Any) -> Detection | None:
    """How sure we are that this record is a Chat Completions call, and why."""
    if not isinstance(value, dict):
        return None
    if chat.is_chunk(value) or _is_completion(value):
        return Detection(0.9, "a Chat Completions response object (choices[], chat.completion)")
    if is_nock(value) and '"object":"chat.completion' in compact_text(value.get("body")):
        return Detection(0.92, "a recorded HTTP response holding a Chat Completions body")
    url = request_url(value)
    if "/chat/completions" in url:
        return Detection(0.9, f"request URL {url.split('?')[0]} is the Chat Completions endpoint")
    if url and ("/responses" in url or "/v1/messages" in url):
        return None
    request = value.get("request")
    if not isinstance(request, dict):
        return None
    body = read_request(request).body
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    if _chat_response(value.get("response")):
        return Detection(0.9, "request has 'messages' and the response has 'choices'")
    if any(_chat_only_message(m) for m in body["messages"]):
        return Detection(0.6, "request 'messages' use Chat roles (system/tool) or tool_calls")
    return Detection(0.4, "request has 'messages' (no response shape to confirm)")


def _is_completion(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if str(value.get("object") or "").startswith("chat.completion"):
        return True
    choices = value.get("choices")
    return (
        isinstance(choices, list)
        and bool(choices)
        and isinstance(choices[0], dict)
        and ("message" in choices[0] or "delta" in choices[0])
    )


def _chat_response(response: Any) -> bool:
    if _is_completion(response):
        return True
    if isinstance(response, list):
        return bool(response) and chat.is_chunk(response[0])
    if not isinstance(response, dict):
        return False
    body = response.get("body") if response.get("body") is not None else response.get("body_raw")
    if _is_completion(body):
        return True
    text = compact_text(body, 4096)
    return '"object":"chat.completion' in text


def _chat_only_message(message: Any) -> bool:
    """Roles and fields the Anthropic Messages API does not have."""
    if not isinstance(message, dict):
        return False
    return message.get("role") in ("system", "developer", "tool") or "tool_calls" in message


def recognise(value: Any) -> Detection | None:
    return _recognise(value)


def sniff(values: Sequence[Any]) -> Detection | None:
    return best_claim(recognise, values)
