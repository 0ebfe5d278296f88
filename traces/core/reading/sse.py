"""Server-sent events: split a recorded `text/event-stream` body into (event, data) pairs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson


def iter_events(body: str) -> Iterator[tuple[str | None, Any]]:
    """Yield (event name, parsed JSON data) for each event; unparsable data comes as text.

    Follows the WHATWG event-stream rules that matter for recorded API streams: events
    end at a blank line, several `data:` lines join with a newline, one space after the
    colon is dropped, and comments (`:` lines) are ignored.
    """
    name: str | None = None
    data_lines: list[str] = []
    for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line:
            if data_lines:
                yield name, _parse("\n".join(data_lines))
            name, data_lines = None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data_lines.append(value)
    if data_lines:
        yield name, _parse("\n".join(data_lines))


def _parse(text: str) -> Any:
    stripped = text.strip()
    if stripped == "[DONE]":
        return stripped
    try:
        return orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return text
