"""The claim `bedrock_converse` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/bedrock_converse.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..base import Detection
from ..http_record import read_request, request_url
from . import best_claim

NAME = "bedrock-converse"
"""The name of the adapter whose `recognise` this is."""

ENDPOINT = re.compile(r"/model/[^/]+/converse(-stream)?(\?|$)")


def _is_converse_request(url: str, body: Any) -> bool:
    if ENDPOINT.search(url.split("?")[0] + "?"):
        return True
    return (
        isinstance(body, dict)
        and isinstance(body.get("messages"), list)
        and ("toolConfig" in body or "inferenceConfig" in body)
    )


def _is_converse_response(value: Any) -> bool:
    output = value.get("output") if isinstance(value, dict) else None
    return isinstance(output, dict) and isinstance(output.get("message"), dict)


def _recognise(value: Any) -> Detection | None:
    if not isinstance(value, dict):
        return None
    url = request_url(value)
    path = url.split("?")[0]
    match = ENDPOINT.search(path + "?")
    if match:
        kind = "ConverseStream" if match.group(1) else "Converse"
        return Detection(0.95, f"request URL calls the Bedrock {kind} endpoint")
    if url:
        return None
    if _is_converse_response(value) and "stopReason" in value:
        return Detection(0.85, "a Bedrock Converse response (output.message, stopReason)")
    request = value.get("request")
    body = read_request(request).body if isinstance(request, dict) else None
    if isinstance(body, dict) and _is_converse_request("", body):
        return Detection(0.7, "request has Converse 'messages' with toolConfig/inferenceConfig")
    return None


def recognise(value: Any) -> Detection | None:
    return _recognise(value)


def sniff(values: Sequence[Any]) -> Detection | None:
    return best_claim(recognise, values)
