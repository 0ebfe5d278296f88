"""Where a rendered page's links point: one small protocol instead of string prefixes.

Renderers (the sequence diagram, the HTML export) ask a `Links` for each address; the web
layer answers with `reverse()` (traces/pages/links.py), the self-contained export with anchors
inside its own file.
"""

from __future__ import annotations

from typing import Protocol

from traces.core.records import dataclass


class Links(Protocol):
    """The addresses a renderer may link to, for one trace."""

    def trace(self) -> str:
        """The trace's own page."""
        ...

    def call(self, index: int) -> str:
        """Call `index`'s page."""
        ...

    def call_findings(self, index: int) -> str:
        """The findings section of call `index`'s page."""
        ...


@dataclass(frozen=True, slots=True)
class PrefixLinks:
    """Links under one fixed base, for renderers with no URLconf: the HTML export's
    anchors inside its own file (`ANCHORS`), and tests and benchmarks."""

    base: str

    def trace(self) -> str:
        return self.base

    def call(self, index: int) -> str:
        return f"{self.base}calls/{index}/"

    def call_findings(self, index: int) -> str:
        return f"{self.call(index)}#findings"


ANCHORS = PrefixLinks("#")
"""The HTML export's links: each call's row carries the anchor `calls/{n}/`."""
