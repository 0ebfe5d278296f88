"""Pages show NUL characters as "␀": trace text may hold them (a tool that `cat`s a binary
file), HTML cannot show them, and they must not vanish silently either.

The JSON API and downloads keep them exactly (`\\u0000`, the original bytes); only
documents meant to be read (HTML, Markdown) are changed.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

VISIBLE_NUL = "␀".encode()
READABLE_TYPES = ("text/html", "text/markdown")


class VisibleNulMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        readable = response.get("Content-Type", "").startswith(READABLE_TYPES)
        if readable and not response.streaming and b"\x00" in response.content:
            response.content = response.content.replace(b"\x00", VISIBLE_NUL)
        return response
