"""The web's answer to the core's `Links`: a trace's addresses from the URLconf, by `reverse()`."""

from __future__ import annotations

from typing import Any

from django.urls import reverse


class TraceLinks:
    """Addresses for one trace's pages, so renderers never build paths by hand.

    A window draws several arrows per call; each call's path is reversed once.
    """

    def __init__(self, trace_id: Any) -> None:
        self.trace_id = trace_id
        self._calls: dict[int, str] = {}

    def trace(self) -> str:
        return reverse("traces:detail", args=[self.trace_id])

    def call(self, index: int) -> str:
        path = self._calls.get(index)
        if path is None:
            path = self._calls[index] = reverse("traces:call", args=[self.trace_id, index])
        return path

    def call_findings(self, index: int) -> str:
        return f"{self.call(index)}#findings"
