"""The proxy's own errors in each vendor's error shape, so an agent's SDK shows our message.

Each SDK reads its vendor's body: Anthropic `{"type": "error", "error": {"type", "message"}}`,
OpenAI `{"error": {"message", "type", "param", "code"}}`, Gemini `{"error": {"code",
"message", "status"}}` (google-genai raises `APIError` with `status` and `message`). When
the vendor cannot be told (a path under `/proxy/` naming none), one body carries the
fields of all three, so whichever SDK made the call finds its message.

`reshaped` turns a refusal that was written once for every endpoint (`traces.access`'s
`{"error": "..."}`: no token, a token that may not record, a rate limit) into the calling
vendor's shape, keeping its status and headers (`WWW-Authenticate`, `Retry-After`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import wraps
from types import MappingProxyType
from typing import Any

from django.http import HttpResponse, JsonResponse

PREFIX = "Loop Inspector proxy: "

GOOGLE_STATUS = MappingProxyType(
    {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        405: "INVALID_ARGUMENT",
        409: "ABORTED",
        413: "INVALID_ARGUMENT",
        429: "RESOURCE_EXHAUSTED",
        499: "CANCELLED",
        500: "INTERNAL",
        501: "UNIMPLEMENTED",
        502: "UNAVAILABLE",
        503: "UNAVAILABLE",
        504: "DEADLINE_EXCEEDED",
    }
)
"""google.rpc.Code names as the Gemini API pairs them with HTTP statuses."""

KIND_OF_STATUS = MappingProxyType(
    {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        413: "request_too_large",
        429: "rate_limit_error",
    }
)
"""The Anthropic/OpenAI error `type` of a refusal that was written without one."""


def google_status(status: int) -> str:
    if status in GOOGLE_STATUS:
        return GOOGLE_STATUS[status]
    return "INTERNAL" if status >= 500 else "FAILED_PRECONDITION"


def error_body(vendor: str | None, status: int, kind: str, message: str) -> dict[str, Any]:
    """The body of an error the proxy itself answers (`message` without our prefix)."""
    text = PREFIX + message
    if vendor == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": text}}
    if vendor in ("openai", "openrouter"):
        return {"error": {"message": text, "type": kind, "param": None, "code": kind}}
    if vendor == "bedrock":  # AWS's JSON error shape: botocore reads `message`
        return {"message": text, "__type": kind}
    if vendor == "gemini":
        return {"error": {"code": status, "message": text, "status": google_status(status)}}
    return {  # no vendor named: every SDK finds its fields
        "type": "error",
        "error": {"type": kind, "message": text, "code": status, "status": google_status(status)},
    }


def vendor_json(vendor: str | None, status: int, kind: str, message: str) -> JsonResponse:
    return JsonResponse(error_body(vendor, status, kind, message), status=status)


def reshaped(response: HttpResponse, vendor: str | None) -> HttpResponse:
    """A `{"error": "text"}` refusal as the vendor's error, status and headers kept; any
    other response as it is."""
    if not isinstance(response, JsonResponse) or response.status_code < 400:
        return response
    try:
        body = json.loads(response.content)
    except ValueError:
        return response
    if not isinstance(body, dict) or not isinstance(body.get("error"), str):
        return response
    status = response.status_code
    kind = KIND_OF_STATUS.get(status, "api_error")
    shaped = vendor_json(vendor, status, kind, body["error"])
    for key, value in response.items():
        if key.lower() not in ("content-type", "content-length"):
            shaped[key] = value
    return shaped


View = Callable[..., Awaitable[HttpResponse]]


def vendor_shaped(view: View) -> View:
    """Wrap a proxy view (outside its `@access`) so the refusals it gets are reshaped.
    `functools.wraps` carries the view's `access_rules` over."""

    @wraps(view)
    async def shaped(request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
        return reshaped(await view(request, *args, **kwargs), kwargs.get("vendor"))

    return shaped
