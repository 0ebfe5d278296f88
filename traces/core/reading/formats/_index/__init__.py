"""The formats' scoring index: each reader's `sniff`, in a light module of its own.

Detection scores a file against every format, but only one reader is needed to read it:
importing all of them to score it (53 modules with their dialects, dataclasses and
regexes) was an eighth of a short `report --html`. So each registered adapter's `sniff`
(and the predicates it calls) lives in `_index/<module>.py`, next to nothing else, and
the reader's `sniff` calls it: one piece of code, so the index and the reader cannot
disagree. `registry.scorers()` imports these modules alone; `get_adapter` then imports
the one reader chosen. `tests/core/test_format_index.py` checks that every reader has
its index (same name, same claim on every corpus file) and that `HELPERS` holds exactly
the modules that register none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..base import Detection

HELPERS = frozenset(
    {
        "chat_results",
        "claude_code_threads",
        "claude_response",
        "explain",
        "gemini_cli_records",
        "http_record",
        "http_traffic",
        "inspect_sample",
        "kimi_messages",
        "message_list_messages",
        "message_threads",
        "otel_gemini_cli",
        "otel_layers",
        "otel_logs",
        "otel_messages",
        "otel_spans",
        "request_log",
    }
)
"""Modules of `formats/` that register no adapter (shared readers, dialect glue): detection
need not import them to learn that."""


def best_claim(
    recognise: Callable[[Any], Detection | None], values: Sequence[Any]
) -> Detection | None:
    """The highest claim `recognise` makes on any one record (a request log's records are
    each a whole call, so one record is enough)."""
    best: Detection | None = None
    for value in values:
        claim = recognise(value)
        if claim is not None and (best is None or claim.score > best.score):
            best = claim
    return best
