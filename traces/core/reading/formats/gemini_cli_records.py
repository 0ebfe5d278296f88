"""The shapes of Gemini CLI's chat records: a message checked field by field, the
conversation contents it adds (model parts, the results its tool calls hold), and the
small readings the adapter takes from a message (its latest time, a notice, a status)."""

from __future__ import annotations

from typing import Any

from traces.core.records import replace

from ...coerce import str_or_none
from ...model import Block, LineError
from ..timeparse import to_epoch_seconds


def clean_message(line: int, value: dict[str, Any]) -> tuple[dict[str, Any], list[LineError]]:
    """The message with its fields checked: what is unreadable is reported and dropped."""
    problems: list[LineError] = []
    clean = dict(value)
    content = value.get("content")
    if content is not None and not isinstance(content, (str, list)):
        problems.append(LineError(line, "message 'content' is neither text nor parts; dropped"))
        clean["content"] = ""
    tokens = value.get("tokens")
    if tokens is not None and not isinstance(tokens, dict):
        problems.append(LineError(line, "message 'tokens' is not an object; usage unknown"))
        clean.pop("tokens")
    calls: list[dict[str, Any]] = []
    raw_calls = value.get("toolCalls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        problems.append(LineError(line, "'toolCalls' is not a list; no tool call read"))
        raw_calls = []
    for call in raw_calls or []:
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            problems.append(LineError(line, "a tool call without an 'id'; skipped"))
            continue
        calls.append(call)
    clean["toolCalls"] = calls
    thoughts = value.get("thoughts")
    clean["thoughts"] = (
        [t for t in thoughts if isinstance(t, dict)] if isinstance(thoughts, list) else []
    )
    return clean, problems


def text_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, list):
        return [p if isinstance(p, dict) else {"text": str(p)} for p in content]
    return []


def model_content(message: dict[str, Any]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for thought in message["thoughts"]:
        subject = str(thought.get("subject") or "")
        description = str(thought.get("description") or "")
        text = f"{subject}\n{description}".strip() if subject else description
        parts.append({"text": text, "thought": True})
    parts.extend(text_parts(message.get("content")))
    for call in message["toolCalls"]:
        parts.append(
            {"functionCall": {"id": call["id"], "name": call.get("name"), "args": call.get("args")}}
        )
    return {"role": "model", "parts": parts}


def result_parts(call: dict[str, Any]) -> list[dict[str, Any]]:
    """The call's recorded result parts; the `functionResponse` carries the call's id
    (filled in when missing) and its `status`."""
    parts: list[dict[str, Any]] = []
    result = call.get("result")
    for part in result if isinstance(result, list) else []:
        if not isinstance(part, dict):
            continue
        answer = part.get("functionResponse")
        if isinstance(answer, dict):
            answer = {**answer, "id": str_or_none(answer.get("id")) or call["id"]}
            answer.setdefault("name", call.get("name"))
            parts.append({"functionResponse": answer, "status": call.get("status")})
        else:
            parts.append(part)
    return parts


def contents_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """What a message adds to the conversation the model sees."""
    if message["type"] == "user":
        return [{"role": "user", "parts": text_parts(message.get("content"))}]
    if message["type"] != "gemini":
        return []
    contents = [model_content(message)]
    results = [part for call in message["toolCalls"] for part in result_parts(call)]
    if results:
        contents.append({"role": "user", "parts": results})
    return contents


def latest_time(message: dict[str, Any]) -> float | None:
    times = [to_epoch_seconds(message.get("timestamp"))]
    times.extend(to_epoch_seconds(c.get("timestamp")) for c in message.get("toolCalls") or [])
    known = [t for t in times if t is not None]
    return max(known) if known else None


def notice_of(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": message["type"],
        "text": prompt_text(message),
        "timestamp": message.get("timestamp"),
    }


def prompt_text(message: dict[str, Any]) -> str:
    return "\n".join(
        p["text"] for p in text_parts(message.get("content")) if isinstance(p.get("text"), str)
    )


def status_of(block: Block) -> str | None:
    if block.kind != "tool_result" or not isinstance(block.raw, dict):
        return None
    status = block.raw.get("status")
    return status if isinstance(status, str) else None


def with_status(block: Block) -> Block:
    status = status_of(block)
    return block if status is None else replace(block, is_error=status == "error")
