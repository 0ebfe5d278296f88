"""Pages show NUL characters as "␀": trace text may hold them (a tool that `cat`s a binary
file), HTML cannot show them, and they must not vanish silently either.

The JSON API and downloads keep them exactly (`\\u0000`, the original bytes); only
documents meant to be read (HTML, Markdown) are changed.
"""

from __future__ import annotations

from collections.abc import Callable

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse

VISIBLE_NUL = "␀".encode()
READABLE_TYPES = ("text/html", "text/markdown")


class VisibleNulMiddleware:
    """Sync and async: under daphne an async view (the recording proxy, the OTLP
    receiver) then stays on the event loop instead of hopping to a thread and back."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._is_async = iscoroutinefunction(get_response)
        if self._is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._is_async:
            return self._acall(request)  # type: ignore[return-value]
        return _visible_nul(self.get_response(request))

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        return _visible_nul(await self.get_response(request))


def _visible_nul(response: HttpResponse) -> HttpResponse:
    readable = response.get("Content-Type", "").startswith(READABLE_TYPES)
    if readable and not response.streaming and b"\x00" in response.content:
        response.content = response.content.replace(b"\x00", VISIBLE_NUL)
    return response
