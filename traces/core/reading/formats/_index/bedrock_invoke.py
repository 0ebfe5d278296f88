"""The claim `bedrock_invoke` makes on a file (its `sniff`), without importing the reader.

Moved from `formats/bedrock_invoke.py` with the predicates it calls, so that detection scores a
file without importing every reader (see `formats/_index/__init__.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeGuard

from ..base import Detection
from ..http_record import read_request, request_url
from . import best_claim

NAME = "bedrock-invoke"
"""The name of the adapter whose `recognise` this is."""

ENDPOINT = re.compile(r"/model/.+/invoke(-with-response-stream)?$")
"""InvokeModel's paths; the model id may be an ARN, its slashes escaped or not."""


BEDROCK_VERSION = "bedrock-2023-05-31"
"""The `anthropic_version` Bedrock documents for Messages bodies (the Anthropic SDK sends
its own API version there instead)."""


def _is_enveloped_messages(body: Any) -> TypeGuard[dict[str, Any]]:
    """A Messages request with its model left to the URL: `anthropic_version` (Bedrock's
    `bedrock-2023-05-31`, or the SDK's own date), `messages`, no `model`."""
    return (
        isinstance(body, dict)
        and isinstance(body.get("anthropic_version"), str)
        and isinstance(body.get("messages"), list)
        and "model" not in body
    )


def recognise(value: Any) -> Detection | None:
    if not isinstance(value, dict):
        return None
    match = ENDPOINT.search(request_url(value).split("?")[0])
    if match:
        kind = "InvokeModelWithResponseStream" if match.group(1) else "InvokeModel"
        return Detection(0.95, f"request URL calls the Bedrock {kind} endpoint")
    request = value.get("request")
    body = read_request(request).body if isinstance(request, dict) else None
    if _is_enveloped_messages(body) and body["anthropic_version"] == BEDROCK_VERSION:
        return Detection(0.9, f"request names anthropic_version {BEDROCK_VERSION}")
    return None


def sniff(values: Sequence[Any]) -> Detection | None:
    return best_claim(recognise, values)
