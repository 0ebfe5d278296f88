"""Numbers a trace may claim: out-of-range usage or HTTP status become line errors, not crashes.

A trace file can say anything: usage of 2^64 tokens, an HTTP status of -1. Databases
store 64-bit counts (and 32-bit statuses on PostgreSQL), and totals add up every call,
so a value no real call could have is dropped here, where the call is built, with a line
error saying so; the call itself is kept.
"""

from __future__ import annotations

from typing import Any

from traces.core.records import fields, replace

from ..model import Exchange, LineError, Usage

MAX_TOKENS = 10**12
"""A trillion tokens in one call is far beyond any model; 2,000,000 calls of it still
sum well inside a signed 64-bit count."""
HTTP_STATUS_RANGE = range(100, 1000)


USAGE_FIELDS = tuple(field.name for field in fields(Usage))


def bounded(exchange: Exchange) -> tuple[Exchange, list[LineError]]:
    """The exchange with impossible numbers removed, and a line error for each."""
    usage = exchange.usage
    status = exchange.http_status
    if (usage is None or _in_range(usage)) and (status is None or status in HTTP_STATUS_RANGE):
        return exchange, []  # every call of a sane file: nothing is looked at twice
    errors: list[LineError] = []
    changes: dict[str, Any] = {}
    if usage is not None:
        wild = [
            (name, value)
            for name in USAGE_FIELDS
            if isinstance(value := getattr(usage, name), int) and not 0 <= value <= MAX_TOKENS
        ]
        if wild:
            name, value = wild[0]
            errors.append(
                LineError(
                    exchange.line,
                    f"usage {name} = {value:,} is out of range (0 to {MAX_TOKENS:,}); "
                    "the call's reported usage is ignored",
                )
            )
            changes["usage"] = None
    if status is not None and status not in HTTP_STATUS_RANGE:
        errors.append(
            LineError(exchange.line, f"HTTP status {status:,} is not a status code; ignored")
        )
        changes["http_status"] = None
    return (replace(exchange, **changes) if changes else exchange), errors


def _in_range(usage: Usage) -> bool:
    """Whether every count of the usage is one a real call could have."""
    for name in USAGE_FIELDS:
        value = getattr(usage, name)
        if isinstance(value, int) and not 0 <= value <= MAX_TOKENS:
            return False
    return True
