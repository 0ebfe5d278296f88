"""The tool call a failed generation attempted, read from the provider's HTTP error body.

When a model writes a tool call the server cannot parse, OpenAI-compatible servers such as
Groq answer 400 `{"error": {"code": "tool_use_failed", "failed_generation": "…"}}`: the
call failed, but the body still says what the model tried, and that is what the user
needs to see to fix the prompt or the schema. The attempt is not a tool call of the loop
(nothing ran, no result will come), so it is shown on the failed call, never paired.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from traces.core.patterns import lazy_compile

from ..coerce import parse_arguments

_FUNCTION_TAG = lazy_compile(
    r"<function[=\s]*(?P<name>[\w.\-]+)\s*[>,(]?\s*(?P<args>\{.*?\})?\s*\)?\s*(?:</function>|>|$)",
    re.DOTALL,
)
"""Llama-style text calls: `<function=search>{"q": "x"}</function>`, `<function=search{…}>`."""


def failed_generation(body: Any) -> str | None:
    """The raw `failed_generation` text of an error body, when it has one."""
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    text = error.get("failed_generation") if isinstance(error, dict) else None
    if text is None:
        text = body.get("failed_generation")
    if text is None:
        return None
    return text if isinstance(text, str) else orjson.dumps(text).decode()


def attempted_tool_calls(body: Any) -> list[dict[str, Any]] | None:
    """The calls a failed generation attempted: `[{name, arguments}]` (arguments parsed
    when they are JSON), `[]` when the text names no call, None without a failed
    generation."""
    text = failed_generation(body)
    if text is None:
        return None
    parsed = _json_calls(text)
    if parsed is not None:
        return parsed
    return [
        {"name": match["name"], "arguments": parse_arguments(match["args"] or "{}")}
        for match in _FUNCTION_TAG.finditer(text)
    ]


def _json_calls(text: str) -> list[dict[str, Any]] | None:
    """`{"name", "arguments"}`, a list of them, `{"tool_calls": […]}` or OpenAI's
    `{"function": {…}}` shape; None when the text is not such JSON."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return None
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict):
            return None
        nested = item.get("function")
        function = nested if isinstance(nested, dict) else item
        name = function.get("name")
        if not isinstance(name, str):
            return None
        arguments = function.get("arguments", function.get("parameters", function.get("input")))
        calls.append({"name": name, "arguments": parse_arguments(arguments)})
    return calls


def describe(calls: list[dict[str, Any]]) -> str:
    """One line naming the attempted calls, e.g. `search({"q": "x"})`."""
    parts = []
    for call in calls:
        arguments = call.get("arguments")
        try:
            shown = orjson.dumps(arguments).decode() if arguments is not None else ""
        except TypeError:
            shown = str(arguments)
        parts.append(f"{call.get('name') or '?'}({shown})")
    return ", ".join(parts)
