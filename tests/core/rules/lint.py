"""Helpers for rule tests: lint a hand-written log with one rule, compare findings exactly."""

from __future__ import annotations

from typing import Any

import orjson

from tests.core.builders import TOOLS
from traces.core.analysis.accounting import account
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.rules.registry import run_rules


def lint(data: bytes, rule: str, **options: Any) -> list[tuple[Any, ...]]:
    """(rule, severity, call, tool_call_id, message) of every finding of one rule."""
    trace = analyze_bytes(data)
    findings = run_rules(trace, account(trace), select=[rule], options={rule: options})
    return [(f.rule, f.severity, f.call, f.tool_call_id, f.message) for f in findings]


def echo(resp: dict[str, Any]) -> dict[str, Any]:
    """The assistant message a loop appends for a response (its content, verbatim)."""
    return {"role": "assistant", "content": resp["content"]}


def results(*blocks: dict[str, Any]) -> dict[str, Any]:
    """One user message carrying tool_result blocks."""
    return {"role": "user", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def request_pair(
    messages: list[dict],
    resp: dict | None,
    *,
    system: Any = "You help.",
    tools: list[dict] | None = None,
    **extra: Any,
) -> bytes:
    """An Anthropic request/response line with a chosen system prompt and tool list."""
    body = {
        "model": "claude-sonnet-4-5",
        "system": system,
        "tools": TOOLS if tools is None else tools,
        "messages": messages,
    }
    return orjson.dumps({"request": body, "response": resp, **extra})
