"""Claude Code session-line shapes: recognising lines, merging messages, reading user actions.

Claude Code writes one JSON object per line to `~/.claude/projects/<project>/<session>.jsonl`
with a `type` (user, assistant, system, progress, summary, file-history-snapshot,
queue-operation, ...), `uuid`/`parentUuid`, `sessionId` and, on user and assistant lines, an
Anthropic Messages API `message`. The strings below are the ones Claude Code itself writes
when the user interrupts a request or rejects a tool use; they were read from real sessions
(see SOURCES.md section 1 of the test corpus).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...coerce import dict_or_empty, text_of

INTERRUPTION_PREFIX = "[Request interrupted by user"
INTERRUPTION_FOR_TOOL_USE = "[Request interrupted by user for tool use"
REJECTION_PREFIXES = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action right now",
)
REJECTION_TOOL_USE_RESULTS = ("User rejected tool use", "Error: The user doesn't want to proceed")
SUBAGENT_TOOLS = ("Task", "Agent")
"""Tool names Claude Code uses to spawn a subagent (renamed from Task to Agent in 2.1)."""
SESSION_LINE_TYPES = ("user", "assistant", "system", "progress", "attachment")
TOOL_RESULT_FIELDS = (
    "status",
    "agentId",
    "interrupted",
    "returnCodeInterpretation",
    "code",
    "codeText",
    "durationMs",
    "durationSeconds",
    "totalDurationMs",
    "totalTokens",
    "totalToolUseCount",
    "backgroundTaskId",
    "retrieval_status",
    "success",
    "numFiles",
    "truncated",
    "userModified",
    "type",
    "filePath",
    "commandName",
)
"""Small scalar fields of `toolUseResult` worth keeping beside the result (exit status,
interruption, durations); the rest duplicates the tool_result text and is dropped."""
TEXT_KEEP_CHARS = 200


def recognise(value: Any) -> str | None:
    """Why this record looks like a Claude Code session line, or None."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if (
        kind in SESSION_LINE_TYPES
        and "sessionId" in value
        and ("uuid" in value or "parentUuid" in value)
    ):
        return "lines carry Claude Code's session fields (type, uuid, parentUuid, sessionId)"
    if kind == "summary" and "leafUuid" in value:
        return "a Claude Code 'summary' line (summary and leafUuid)"
    if kind == "file-history-snapshot" and "snapshot" in value:
        return "a Claude Code 'file-history-snapshot' line"
    if kind == "queue-operation" and "operation" in value and "sessionId" in value:
        return "a Claude Code 'queue-operation' line"
    return None


def content_blocks(content: Any) -> list[Any]:
    """A message's content as a list of blocks (a plain string becomes one text block)."""
    if isinstance(content, list):
        return content
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return []


def merge_user_messages(raws: Sequence[Any]) -> Any:
    """The one user message the API received for consecutive user lines.

    A single line is returned as written (the same object), so that transcripts share it.
    """
    if len(raws) == 1:
        return raws[0]
    content: list[Any] = []
    for raw in raws:
        content.extend(content_blocks(raw.get("content") if isinstance(raw, dict) else raw))
    return {"role": "user", "content": content}


def join_transcripts(base: list[Any], own: list[Any]) -> list[Any]:
    """`base` followed by `own`, merging a user message that meets a user message."""
    if base and own and _role(base[-1]) == "user" and _role(own[0]) == "user":
        return [*base[:-1], merge_user_messages([base[-1], own[0]]), *own[1:]]
    return [*base, *own]


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, dict) else None


def tool_results(content: Any) -> list[dict[str, Any]]:
    """The tool_result blocks of a user message's content."""
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def first_text(content: Any) -> str | None:
    """The first text of a message: how a subagent's prompt is matched to its Task call."""
    if isinstance(content, str):
        return content
    for block in content_blocks(content):
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            return text if isinstance(text, str) else None
    return None


def interruption_text(content: Any) -> str | None:
    """The "[Request interrupted by user...]" marker a user line carries, if any."""
    for block in content_blocks(content):
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str) and text.startswith(INTERRUPTION_PREFIX):
                return text
    return None


def is_rejection(block: dict[str, Any], tool_use_result: Any) -> bool:
    """True for the tool_result Claude Code writes when the user refuses a tool use."""
    text = text_of(block.get("content"))
    if text.startswith(REJECTION_PREFIXES):
        return True
    return isinstance(tool_use_result, str) and tool_use_result.startswith(
        REJECTION_TOOL_USE_RESULTS
    )


def is_interrupted_result(block: dict[str, Any], tool_use_result: Any) -> bool:
    """True when the tool itself was stopped by the user (Esc while it ran)."""
    if text_of(block.get("content")).startswith(INTERRUPTION_PREFIX):
        return True
    return isinstance(tool_use_result, dict) and tool_use_result.get("interrupted") is True


def tool_result_summary(tool_use_result: Any) -> dict[str, Any] | None:
    """The small, useful part of a line's structured `toolUseResult`."""
    if isinstance(tool_use_result, str):
        return {"text": tool_use_result[:TEXT_KEEP_CHARS]}
    if not isinstance(tool_use_result, dict):
        return None
    kept = {
        key: value
        for key in TOOL_RESULT_FIELDS
        if isinstance(value := tool_use_result.get(key), (str, int, float, bool))
        and not (isinstance(value, str) and len(value) > TEXT_KEEP_CHARS)
    }
    return kept or None


def infer_stop_reason(blocks: Sequence[Any]) -> str:
    """What the API must have said when the log kept no stop_reason: a response that asks
    for a tool stopped on tool_use, anything else ended its turn."""
    asks_tool = any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks)
    return "tool_use" if asks_tool else "end_turn"


def output_tokens(usage: Any) -> int:
    """`output_tokens` of a usage snapshot, -1 when absent (so any real value wins)."""
    if not isinstance(usage, dict):
        return -1
    value = usage.get("output_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def api_error(value: dict[str, Any]) -> tuple[str, int | None]:
    """(message, HTTP status) of a `system` line with subtype `api_error` (one failed try)."""
    error = value.get("error")
    status: int | None = None
    text = ""
    if isinstance(error, dict):
        raw_status = error.get("status")
        status = raw_status if isinstance(raw_status, int) else None
        inner = dict_or_empty(error.get("error"))
        nested = dict_or_empty(inner.get("error"))
        detail = nested or inner
        kind = detail.get("type") or error.get("type") or ""
        message = detail.get("message") or error.get("message") or ""
        text = f"{kind}: {message}".strip(": ")
    elif isinstance(error, str):
        text = error
    if not text and isinstance(value.get("content"), str):
        text = value["content"]
    if not text:
        text = "API error (retried)"
    return (f"HTTP {status} {text}" if status else text), status


def synthetic_error(value: dict[str, Any], message: dict[str, Any]) -> str | None:
    """The text of the assistant message Claude Code writes when an API call finally failed,
    or None when this line is a real model response."""
    if value.get("isApiErrorMessage") is True:
        return first_text(message.get("content")) or "API error"
    if message.get("model") == "<synthetic>":  # the text is read only for such a line
        text = first_text(message.get("content")) or ""
        return text if text.startswith("API Error") else None
    return None
