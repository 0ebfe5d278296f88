"""Credentials in recorded HTTP headers are masked before anything shows them.

Only the copy kept for display is masked: the original file stays byte-identical.
"""

from __future__ import annotations

import re
from typing import Any

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "openai-organization",
        "openai-project",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
        "x-amz-security-token",
    }
)
SECRET_QUERY = re.compile(r"([?&](?:key|api_key|apikey|access_token|token)=)[^&#]*", re.IGNORECASE)


def mask_headers(headers: dict[str, Any]) -> dict[str, Any]:
    return {k: ("[masked]" if str(k).lower() in SECRET_HEADERS else v) for k, v in headers.items()}


def mask_url(url: str) -> str:
    """A URL with credentials in its query (Gemini's `?key=`, `access_token=`) masked."""
    return SECRET_QUERY.sub(r"\1[masked]", url)
