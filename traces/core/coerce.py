"""Lenient readers of JSON values that every format needs: trace files are untrusted, so a
field of the wrong type reads as "absent", never as a crash."""

from __future__ import annotations

from typing import Any

import orjson


def str_or_none(value: Any) -> str | None:
    """Text as written; a non-text id or name (a number) as its text; None when absent."""
    return value if isinstance(value, str) else (None if value is None else str(value))


def int_or_none(value: Any) -> int | None:
    """An integer field, or None when absent or not an integer (booleans are not numbers)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def dict_or_empty(value: Any) -> dict[str, Any]:
    """A JSON object, or {} for anything else (absent, null, a list, text)."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value: Any) -> list[Any]:
    """A JSON array, or [] for anything else."""
    return value if isinstance(value, list) else []


def int_or_zero(value: Any) -> int:
    """An integer field, or 0 (booleans are not numbers here)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def non_negative(value: Any) -> int:
    """A count or an index: a non-negative integer, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def parse_arguments(arguments: Any, *, blank_is_empty: bool = False) -> Any:
    """Tool arguments sent as a JSON string, parsed; malformed ones stay the raw string
    (a finding for the lint rules, not a crash). `blank_is_empty` reads "" as {}."""
    if not isinstance(arguments, str):
        return arguments
    if blank_is_empty and not arguments.strip():
        return {}
    try:
        return orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return arguments


def text_of(content: Any, placeholder: str = "block") -> str:
    """Plain text of content that is a string or a list of parts; non-text parts show as
    `[type]` so a reader sees they were there."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, dict):
                pieces.append(f"[{part.get('type', placeholder)}]")
        return "\n".join(pieces)
    return "" if content is None else str(content)
