"""The claim `gemini` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/gemini.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...dialects import gemini
from ..base import Detection
from ..http_record import read_request, request_url
from . import best_claim

NAME = "gemini"
"""The name of the adapter whose `recognise` this is."""

ENDPOINT = re.compile(r"models/([^/:?]+):(stream)?[gG]enerateContent")


def _recognise(value: Any) -> Detection | None:
    if not isinstance(value, dict):
        return None
    url = request_url(value)
    match = ENDPOINT.search(url)
    if match:
        kind = "streamGenerateContent" if match.group(2) else "generateContent"
        return Detection(0.95, f"request URL calls the Gemini {kind} endpoint")
    if url:
        return None
    request = value.get("request")
    body = read_request(request).body if isinstance(request, dict) else None
    contents = body.get("contents") if isinstance(body, dict) else None
    if isinstance(contents, list) and any(
        isinstance(c, dict) and isinstance(c.get("parts"), list) for c in contents
    ):
        return Detection(0.85, "request has Gemini 'contents' with 'parts'")
    if gemini.candidate_content(value) is not None and "usageMetadata" in value:
        return Detection(0.85, "a Gemini response (candidates[].content, usageMetadata)")
    return None


def recognise(value: Any) -> Detection | None:
    return _recognise(value)


def sniff(values: Sequence[Any]) -> Detection | None:
    return best_claim(recognise, values)
