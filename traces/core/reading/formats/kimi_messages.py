"""The pieces of a Kimi Code wire log a call is rebuilt from: one step on its way, an
`Agent` call awaiting its subagent, the Chat messages of a step, Kimi's usage record."""

from __future__ import annotations

from typing import Any

from traces.core.records import dataclass, field

from ...coerce import int_or_zero, list_or_empty
from ...model import Usage

LATENCIES = (
    "llmFirstTokenLatencyMs",
    "llmStreamDurationMs",
    "llmRequestBuildMs",
    "llmServerFirstTokenMs",
    "llmServerDecodeMs",
    "llmClientConsumeMs",
)


def seconds(value: Any) -> float | None:
    ms = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return ms / 1000 if ms is not None else None


@dataclass
class Step:
    """One request on its way: what it sent, and what came back so far."""

    line: int
    transcript: list[Any]
    length: int
    request: dict[str, Any] = field(default_factory=dict)
    blocks: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    end_time: float | None = None


@dataclass
class AgentCall:
    tool_id: str
    started: float | None
    ended: float | None = None
    agent_id: str | None = None
    subagent_type: str | None = None


def text_part(part: Any) -> dict[str, Any]:
    if isinstance(part, dict) and part.get("type") == "text":
        return {"type": "text", "text": str(part.get("text") or "")}
    return part if isinstance(part, dict) else {"type": "text", "text": str(part)}


def chat_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("args", call.get("arguments"))
    function = {"name": call.get("name"), "arguments": args}
    return {"id": call.get("id"), "type": "function", "function": function}


def assistant_message(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message of a step: reasoning, text, then its tool calls."""
    message: dict[str, Any] = {"role": "assistant"}
    think = "".join(b["text"] for b in blocks if b["type"] == "think")
    if think:
        message["reasoning_content"] = think
    text = "".join(b["text"] for b in blocks if b["type"] == "text")
    message["content"] = text or None
    calls = [b["call"] for b in blocks if b["type"] == "call"]
    if calls:
        message["tool_calls"] = calls
    return message


def input_text(value: Any) -> str:
    parts = [p.get("text") for p in list_or_empty(value) if isinstance(p, dict)]
    return "".join(p for p in parts if isinstance(p, str))


def kimi_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=int_or_zero(raw.get("inputOther")),
        output_tokens=int_or_zero(raw.get("output")),
        cache_read_tokens=int_or_zero(raw.get("inputCacheRead")),
        cache_write_tokens=int_or_zero(raw.get("inputCacheCreation")),
    )
