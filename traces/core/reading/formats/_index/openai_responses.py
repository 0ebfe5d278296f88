"""The claim `openai_responses` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/openai_responses.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...dialects import openai_responses as responses
from ..base import Detection
from ..http_record import compact_text, is_nock, read_request, request_url
from . import best_claim

NAME = "openai-responses"
"""The name of the adapter whose `recognise` this is."""


def _recognise(value: Any) -> Detection | None:
    """How sure we are that this record is a Responses API call, and why."""
    if not isinstance(value, dict):
        return None
    if _is_response_object(value):
        return Detection(0.9, "a Responses API response object (object: response, output[])")
    if responses.is_stream_event(value):
        return Detection(0.9, "Responses API stream events (response.*)")
    if is_nock(value) and _responses_text(value.get("body")):
        return Detection(0.92, "a recorded HTTP response holding a Responses API body")
    url = request_url(value)
    path = url.split("?")[0]
    if "/chat/completions" in path or "/v1/messages" in path:
        return None
    if "/responses" in path:
        return Detection(0.9, f"request URL {path} is the Responses API endpoint")
    request = value.get("request")
    body = read_request(request).body if isinstance(request, dict) else None
    if not isinstance(body, dict) or "messages" in body:
        return None
    if not isinstance(body.get("input"), (str, list)):
        return None
    if _responses_body(value.get("response")):
        return Detection(0.9, "request has 'input' and the response is a Responses API object")
    if "model" in body:
        return Detection(0.5, "request has 'input' and 'model' (no response shape to confirm)")
    return None


def _is_response_object(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("object") == "response"
        and isinstance(value.get("output", []), list)
    )


def _responses_body(response: Any) -> bool:
    if _is_response_object(response):
        return True
    if isinstance(response, list) and response and responses.is_stream_event(response[0]):
        return True
    if not isinstance(response, dict):
        return False
    body = response.get("body") if response.get("body") is not None else response.get("body_raw")
    return _is_response_object(body) or _responses_text(body)


def _responses_text(body: Any) -> bool:
    text = compact_text(body, 4096)
    return '"object":"response"' in text or "event:response.created" in text


def recognise(value: Any) -> Detection | None:
    return _recognise(value)


def sniff(values: Sequence[Any]) -> Detection | None:
    return best_claim(recognise, values)
