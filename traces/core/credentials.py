"""Credentials in recorded HTTP headers are masked before anything shows them.

Only the copy kept for display is masked: the original file stays byte-identical.
"""

from __future__ import annotations

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
    }
)


def mask_headers(headers: dict[str, Any]) -> dict[str, Any]:
    return {k: ("[masked]" if str(k).lower() in SECRET_HEADERS else v) for k, v in headers.items()}
