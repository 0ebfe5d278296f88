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


def bounded(exchange: Exchange) -> tuple[Exchange, list[LineError]]:
    """The exchange with impossible numbers removed, and a line error for each."""
    errors: list[LineError] = []
    changes: dict[str, Any] = {}
    usage = exchange.usage
    if usage is not None:
        wild = [
            (field.name, value)
            for field in fields(Usage)
            if isinstance(value := getattr(usage, field.name), int) and not 0 <= value <= MAX_TOKENS
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
    status = exchange.http_status
    if status is not None and status not in HTTP_STATUS_RANGE:
        errors.append(
            LineError(exchange.line, f"HTTP status {status:,} is not a status code; ignored")
        )
        changes["http_status"] = None
    return (replace(exchange, **changes) if changes else exchange), errors
