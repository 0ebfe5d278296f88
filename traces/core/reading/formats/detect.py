"""Pick the adapter for a file by sniffing its first records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from traces.core.records import dataclass

from ..limits import InputRejected
from .base import Adapter
from .explain import explain_no_format
from .registry import adapters, get_adapter, scorers

SNIFF_RECORDS = 20


@dataclass(frozen=True, slots=True)
class Choice:
    adapter: type[Adapter]
    reason: str


def detect(values: Sequence[Any]) -> Choice:
    """Ask every format about the first records; the highest score wins. Each is asked
    through the scoring index (`registry.scorers`), so only the winner's reader is imported.

    Raises `InputRejected` listing the formats tried when none claims the file.
    """
    sample = list(values[:SNIFF_RECORDS])
    best: tuple[str, str] | None = None
    best_score = 0.0
    for scorer in scorers():
        try:
            claim = scorer.sniff(sample)
        except Exception:  # a sniffer must never sink the upload
            claim = None
        if claim is not None and claim.score > best_score:
            best, best_score = (scorer.name, claim.reason), claim.score
    if best is None:
        raise InputRejected(explain_no_format(sample, adapters()))
    return Choice(get_adapter(best[0]), best[1])
