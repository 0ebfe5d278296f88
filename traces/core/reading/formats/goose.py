"""Goose sessions (the JSONL store): messages rebuilt into the model calls behind them.

Goose (block/goose) kept each session in `~/.local/share/goose/sessions/<id>.jsonl`: the
first line is the session's metadata (`working_dir`, `description`, `schedule_id`,
`message_count`, `total_tokens`, `input_tokens`, `output_tokens` and their `accumulated_*`
totals), every other line one `Message {id?, role, created (epoch seconds), content[]}`.
Content items are tagged by `type` (camelCase): `text`, `image`, `toolRequest {id,
toolCall}`, `toolResponse {id, toolResult}`, `frontendToolRequest`, `toolConfirmationRequest`,
`thinking {thinking, signature}`, `redactedThinking`, `contextLengthExceeded`,
`summarizationRequested`; a `toolCall`/`toolResult` is `{status: "success", value}` or
`{status: "error", error}`. No real session file with a licence was found (SOURCES.md,
"searched for, not taken"): this reader follows Goose's own source (`session/storage.rs`:
metadata first line, `read_messages`; `message.rs`: the content enum;
`tool_result_serde.rs`: the status/value shape). Newer Goose keeps sessions in a SQLite
`sessions.db`: that store is out of scope here (not a JSON file).

- A model call is an assistant message (consecutive assistant lines with the same `id` are
  the pieces of one streamed reply, joined). Its request is every message before it,
  rebuilt as Anthropic-shaped messages (the Anthropic dialect reads them): text,
  thinking, `toolRequest` → tool_use (`toolCall.value {name, arguments}`; an invalid call,
  status error, is kept with its error as input), `toolResponse` → tool_result (the
  text of `toolResult.value`; status error → an error result with its message).
- Goose records no per-call usage (only session totals, on the metadata line): tokens
  are estimated, and the totals are kept on the first call (`extra.session_tokens`).
  No model name is recorded either.
- Times: a call ends at its message's `created` and starts at the message before it.
- `extra.agent_session` on the first call: agent, session id (the file's name, when the
  ingest passes it: files uploaded together) and project (`working_dir`); the description
  is kept (`extra.description`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, int_or_none, list_or_empty, str_or_none
from ...model import Exchange, LineError, ToolTiming
from ..dialects import anthropic
from ..records import Record
from ..transcript import TranscriptView
from ._index import goose as scoring
from ._index.goose import _is_message, _is_metadata
from .base import Adapter, AdapterEvent, Detection
from .registry import register

TOKEN_FIELDS = (
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "accumulated_total_tokens",
    "accumulated_input_tokens",
    "accumulated_output_tokens",
)
_STEM = re.compile(r"([^/\\]+?)(?:\.jsonl)?$")


@register
class GooseAdapter(Adapter):
    name = "goose"
    label = "Goose session"
    where = (
        "Goose CLI and Desktop kept each session in ~/.local/share/goose/sessions/<id>.jsonl "
        "(newer versions use sessions.db, which is not read here)."
    )
    markers = ("role", "created", "content", "working_dir", "description", "message_count")
    normalize = staticmethod(anthropic.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._messages: list[Any] = []
        self._metadata: dict[str, Any] | None = None
        self._pending: tuple[int, Any, dict[str, Any], float | None] | None = None
        self._last_time: float | None = None
        self._requests: dict[str, tuple[str | None, float | None]] = {}
        self._calls = 0

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if _is_metadata(value):
            if record.line == 1 or self._metadata is None:
                self._metadata = value
            return
        if not _is_message(value):
            yield LineError(record.line, "not a Goose message (role, created, content[])")
            return
        moment = _seconds(value.get("created"))
        if value["role"] == "assistant":
            yield from self._assistant(record.line, value, moment)
            return
        yield from self._flush()
        blocks: list[dict[str, Any]] = []
        for item in value["content"]:
            block = self._block(record.line, item, moment)
            if isinstance(block, LineError):
                yield block
            elif isinstance(block, ToolTiming):
                yield block
                blocks.append(_result_block(item))
            elif block is not None:
                blocks.append(block)
        self._messages.append({"role": "user", "content": blocks})
        if moment is not None:
            self._last_time = moment

    def close(self) -> Iterator[AdapterEvent]:
        yield from self._flush()

    def no_call_notice(self) -> str | None:
        if self._calls:
            return None
        return (
            "Read as a Goose session holding no assistant message (only its metadata or "
            "user messages): upload a session in which Goose answered."
        )

    # -- messages --------------------------------------------------------------------
    def _assistant(
        self, line: int, value: dict[str, Any], moment: float | None
    ) -> Iterator[AdapterEvent]:
        blocks: list[dict[str, Any]] = []
        for item in value["content"]:
            block = self._block(line, item, moment)
            if isinstance(block, LineError):
                yield block
            elif isinstance(block, dict):
                blocks.append(block)
        message_id = str_or_none(value.get("id"))
        pending = self._pending
        if pending is not None and message_id is not None and pending[1] == message_id:
            pending[2]["content"].extend(blocks)  # another piece of the same reply
            self._pending = (pending[0], pending[1], pending[2], moment or pending[3])
            return
        yield from self._flush()
        self._pending = (line, message_id, {"role": "assistant", "content": blocks}, moment)

    def _block(
        self, line: int, item: Any, moment: float | None
    ) -> dict[str, Any] | ToolTiming | LineError | None:
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(kind, str):
            return LineError(line, "content item without a type; skipped")
        if kind == "text":
            return {"type": "text", "text": str(item.get("text") or "")}
        if kind == "thinking":
            return {"type": "thinking", "thinking": str(item.get("thinking") or "")}
        if kind == "redactedThinking":
            return {"type": "redacted_thinking", "data": item.get("data")}
        if kind == "image":
            return {"type": "image", "source": {"media_type": item.get("mimeType")}}
        if kind in ("toolRequest", "frontendToolRequest"):
            return self._request(line, item, moment)
        if kind == "toolResponse":
            return self._response(line, item, moment)
        if kind in ("contextLengthExceeded", "summarizationRequested"):
            return {"type": "text", "text": f"[{kind}] {item.get('msg') or ''}".strip()}
        return None  # toolConfirmationRequest and the like: not sent to the model

    def _request(
        self, line: int, item: dict[str, Any], moment: float | None
    ) -> dict[str, Any] | LineError:
        tool_id = str_or_none(item.get("id"))
        if not tool_id:
            return LineError(line, f"{item['type']} without an id; skipped")
        call = dict_or_empty(item.get("toolCall"))
        value = dict_or_empty(call.get("value"))
        name: str | None = None
        arguments: Any = {"error": call.get("error")}
        if call.get("status") != "error":
            name, arguments = str_or_none(value.get("name")), value.get("arguments")
        self._requests[tool_id] = (name, moment)
        return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}

    def _response(
        self, line: int, item: dict[str, Any], moment: float | None
    ) -> dict[str, Any] | ToolTiming | LineError:
        tool_id = str_or_none(item.get("id"))
        if not tool_id:
            return LineError(line, "toolResponse without an id; skipped")
        if not isinstance(item.get("toolResult"), dict):
            return LineError(line, f"toolResponse {tool_id} without a toolResult; skipped")
        block = _result_block(item)
        if tool_id not in self._requests:
            return block  # an orphan: the next request carries it
        name, started = self._requests[tool_id]
        return ToolTiming(
            line,
            tool_id,
            name=name,
            started_at=started,
            ended_at=moment,
            is_error=bool(block.get("is_error")),
            result_text=block["content"],
        )

    # -- the call --------------------------------------------------------------------
    def _flush(self) -> Iterator[Exchange]:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        line, message_id, message, moment = pending
        request = TranscriptView(self._messages, len(self._messages))
        self._messages.append(message)
        extra: dict[str, Any] = {}
        if message_id:
            extra["message_id"] = message_id
        if not self._calls:
            extra.update(self._first_extra())
        self._calls += 1
        uses = [b for b in message["content"] if b.get("type") == "tool_use"]
        started, self._last_time = self._last_time, moment or self._last_time
        yield Exchange(
            line=line,
            messages=request,
            normalize=self.normalize,
            response=self.normalize(message),
            response_raw=message,
            stop_reason="tool_use" if uses else "end_turn",
            started_at=started,
            ended_at=moment,
            extra=extra,
            loop_key=f"goose:{self.source_name}",
            loop_label="Goose session",
            tokens_estimated=True,
        )

    def _first_extra(self) -> dict[str, Any]:
        session: dict[str, Any] = {"agent": "Goose"}
        stem = _STEM.search(self.source_name)
        if self.source_name and stem:
            session["session_id"] = stem.group(1)
        metadata = self._metadata or {}
        project = str_or_none(metadata.get("working_dir"))
        if project:
            session["project"] = project
        extra: dict[str, Any] = {"agent_session": session}
        if isinstance(metadata.get("description"), str) and metadata["description"]:
            extra["description"] = metadata["description"]
        tokens = {k: metadata[k] for k in TOKEN_FIELDS if int_or_none(metadata.get(k)) is not None}
        if tokens:
            extra["session_tokens"] = tokens
        return extra


def _result_block(item: dict[str, Any]) -> dict[str, Any]:
    result = dict_or_empty(item.get("toolResult"))
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": item.get("id")}
    if result.get("status") == "error":
        block["content"], block["is_error"] = str(result.get("error") or ""), True
    else:
        block["content"] = _content_text(result.get("value"))
    return block


def _content_text(value: Any) -> str:
    """The text of MCP content items (text, a resource's text; others by their type)."""
    parts = []
    for item in list_or_empty(value):
        if not isinstance(item, dict):
            parts.append(str(item))
        elif isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif isinstance(dict_or_empty(item.get("resource")).get("text"), str):
            parts.append(item["resource"]["text"])
        else:
            parts.append(f"[{item.get('type') or 'content'}]")
    return "\n".join(parts) if parts or not isinstance(value, str) else value


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
