"""Gemini CLI's `tool_call` spans (packages/core/src/scheduler/tool-executor.ts):
`gen_ai.input.messages` holds the JSON of its `ToolCallRequestInfo` (`{callId, name,
args, prompt_id …}`) and `gen_ai.output.messages` the completed call (`{status, request,
response: {callId, responseParts: [{functionResponse: {id, name, response}}], error}}`),
each cut at 10,000 characters; what can be read of them times and fills the tool run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..dialects import gemini
from ..dialects import otel_genai as otel


def gemini_cli_tool(attrs: Mapping[str, Any], failed: bool) -> tuple[Any, Any, bool]:
    """(arguments, result, failed) of a Gemini CLI tool span."""
    request = otel.parse_json(attrs.get("gen_ai.input.messages"))
    arguments = request.get("args") if isinstance(request, dict) else None
    completed = otel.parse_json(attrs.get("gen_ai.output.messages"))
    if not isinstance(completed, dict):
        return arguments, None, failed
    status = completed.get("status")
    response = completed.get("response")
    texts: list[str] = []
    parts = response.get("responseParts") if isinstance(response, dict) else None
    for part in parts if isinstance(parts, list) else []:
        answer = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(answer, dict):
            texts.append(gemini.result_text(answer.get("response")))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    failed = failed or status in ("error", "cancelled")
    return arguments, ("\n".join(texts) if texts else None), failed
