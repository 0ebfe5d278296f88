"""Cline / Roo Code / Kilo Code task folders: `globalStorage/<extension id>/tasks/<task id>/`.

The VS Code extensions Cline (saoudrizwan.claude-dev), Roo Code (rooveterinaryinc.roo-cline)
and Kilo Code (kilocode.kilo-code) keep each task as a folder of JSON documents, read here
as one trace when uploaded together:

- `api_conversation_history.json`: the Anthropic messages sent to the model, a JSON list
  `[{role, content (string or blocks), ts?, id?, modelInfo?}]` (Cline's
  `ClineStorageMessage`, src/core/task). Each assistant message is one model call whose
  request is every message before it. Tools are native `tool_use` / `tool_result` blocks
  in newer versions (paired by id); older versions write them as XML-like text
  (`<read_file><path>..</path></read_file>`) with no id: that text is shown as written
  and not counted as a tool call (left alone: pairing it would be a guess).
- `ui_messages.json`: what the chat panel showed, `[{ts, type: "say"|"ask", say?, ask?,
  text?}]`. Each `say: "api_req_started"` message's `text` is a JSON string
  (`ClineApiReqInfo`: {request, tokensIn, tokensOut, cacheWrites, cacheReads, cost,
  cancelReason?, streamingFailedMessage?, apiProtocol?}); the n-th of them is matched with
  the n-th assistant message of the history (Cline writes one per request, in order).
  It gives the call's usage (tokensIn is the uncached input, as Anthropic counts it; cache
  reads and writes are separate), `extra.cost_usd`, the start time (`ts`), a cancel
  reason; the call ends at the assistant message's `ts`, or failing that at the next UI
  message's. The ingest reads it before the
  history whatever the upload order. Alone it holds no conversation: it is recognised
  and said so (`no_call_notice`), not turned into calls without requests.
- `task_metadata.json` ({files_in_context, model_usage, environment_history}): recognised,
  no call, said so; with the others it adds nothing.
- History alone: calls without usage (`tokens_estimated`), times from message `ts` when the
  version writes them.
- The first call carries `extra.agent_session` {agent (Cline, Roo Code or Kilo Code, from
  the extension id in the file path when it is there, else "Cline"), session_id (the task
  folder's name; a single-file upload carries no path, so neither is known then),
  project (the "Current Working Directory" of the first <environment_details>)}.

No real task folder was available: the shapes follow cline/cline (src/shared/ExtensionMessage.ts,
src/core/task) and RooCodeInc/Roo-Code, and the tests use small files written after them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import orjson

from ...coerce import non_negative, str_or_none, text_of
from ...model import Exchange, LineError, Usage
from ..dialects import anthropic
from ..records import Record
from ..transcript import TranscriptView
from ._index import cline_task as scoring
from ._index.cline_task import _first_text, is_history_message, is_task_metadata, is_ui_message
from .base import Adapter, AdapterEvent, Detection
from .cline_sdk import result_timings
from .registry import register

CWD = re.compile(r"# Current (?:Working Directory|Workspace Directory) \(([^)\n]+)\)")
TASK_FOLDER = re.compile(r"tasks[/\\]([^/\\]+)[/\\][^/\\]+$")
AGENTS = {
    "saoudrizwan.claude-dev": "Cline",
    "rooveterinaryinc.roo-cline": "Roo Code",
    "kilocode.kilo-code": "Kilo Code",
}


def request_info(message: dict[str, Any]) -> dict[str, Any] | str:
    """An `api_req_started` message's JSON text; a string says why it could not be read."""
    text = message.get("text")
    if not isinstance(text, str):
        return "api_req_started without a text"
    try:
        info = orjson.loads(text)
    except orjson.JSONDecodeError:
        return "api_req_started text is not JSON"
    return info if isinstance(info, dict) else "api_req_started text is not a JSON object"


def usage_from(info: dict[str, Any]) -> Usage | None:
    if not any(k in info for k in ("tokensIn", "tokensOut")):
        return None
    return Usage(
        input_tokens=non_negative(info.get("tokensIn")),
        output_tokens=non_negative(info.get("tokensOut")),
        cache_read_tokens=non_negative(info.get("cacheReads")),
        cache_write_tokens=non_negative(info.get("cacheWrites")),
    )


def seconds(ms: Any) -> float | None:
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms <= 0:
        return None
    return ms / 1000


@register
class ClineTaskAdapter(Adapter):
    name = "cline-task"
    label = "Cline / Roo Code / Kilo Code task folder"
    where = (
        "VS Code keeps each task in <VS Code user data>/globalStorage/<extension id>/tasks/"
        "<task id>/ (Cline: saoudrizwan.claude-dev, Roo Code: rooveterinaryinc.roo-cline, "
        "Kilo Code: kilocode.kilo-code): upload api_conversation_history.json together "
        "with ui_messages.json (for tokens, cost and times)."
    )
    markers = ("ts", "say", "ask", "conversationHistoryIndex")
    normalize = staticmethod(anthropic.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._shared: dict[str, Any] = self.shared.setdefault(
            self.name, {"requests": [], "calls": 0}
        )
        self._kind: str | None = None
        self._transcript: list[Any] = []
        self._tool_started: dict[str, float | None] = {}
        self._last_ts: float | None = None
        self._pending_end: tuple[dict[str, Any], float | None] | None = None
        match = TASK_FOLDER.search(source_name or "")
        self._task = match.group(1) if match else None
        lowered = (source_name or "").lower()
        self._agent = next((name for key, name in AGENTS.items() if key in lowered), "Cline")

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def no_call_notice(self) -> str | None:
        if self._shared["calls"]:
            return None
        if self._kind == "ui":
            count = len(self._shared["requests"])
            return (
                f"Read as a Cline task's UI messages (ui_messages.json): {count} API "
                "request(s) with tokens and cost, but not the conversation. Upload "
                "api_conversation_history.json from the same task folder with it."
            )
        if self._kind == "metadata":
            return (
                "Read as a Cline task's task_metadata.json (files in context, models used): "
                "it holds no conversation. Upload api_conversation_history.json and "
                "ui_messages.json from the same task folder."
            )
        return None

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if is_task_metadata(value):
            self._kind = self._kind or "metadata"
            return
        if is_ui_message(value):
            self._kind = self._kind or "ui"
            yield from self._ui(record.line, value)
            return
        if not is_history_message(value):
            yield LineError(record.line, "expected a message {role, content} or a UI message")
            return
        self._kind = self._kind or "history"
        yield from self._history(record.line, value)

    # -- ui_messages.json ---------------------------------------------------------------
    def _ui(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        moment = seconds(value.get("ts"))
        if self._pending_end is not None:
            self._pending_end[0]["ended_at"] = moment
            self._pending_end = None
        if value.get("say") != "api_req_started":
            return
        info = request_info(value)
        if isinstance(info, str):
            yield LineError(line, info)
            return
        entry: dict[str, Any] = {"info": info, "started_at": moment, "ended_at": None}
        self._shared["requests"].append(entry)
        self._pending_end = (entry, moment)

    # -- api_conversation_history.json --------------------------------------------------
    def _history(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        moment = seconds(value.get("ts"))
        content = value.get("content")
        if value["role"] == "assistant":
            yield self._exchange(line, value, moment)
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tool_id = str_or_none(block.get("id"))
                    if tool_id:
                        self._tool_started[tool_id] = moment
        else:
            yield from result_timings(line, content, self._tool_started, moment, text=text_of)
        self._transcript.append(value)
        if moment is not None:
            self._last_ts = moment

    def _exchange(self, line: int, value: dict[str, Any], moment: float | None) -> Exchange:
        index = self._shared["calls"]
        requests = self._shared["requests"]
        request = requests[index] if index < len(requests) else None
        info = request["info"] if request else {}
        usage = usage_from(info)
        response = anthropic.normalize_message(value)
        extra: dict[str, Any] = {
            "message_id": value.get("id"),
            "stop_reason_inferred": True,
            "cost_usd": info.get("cost"),
            "cancel_reason": info.get("cancelReason"),
            "streaming_failed": info.get("streamingFailedMessage"),
            "api_protocol": info.get("apiProtocol"),
        }
        if index == 0:
            session = {"agent": self._agent}
            if self._task:
                session["session_id"] = self._task
            project = self._project()
            if project:
                session["project"] = project
            extra["agent_session"] = session
        self._shared["calls"] = index + 1
        started = request["started_at"] if request else self._last_ts
        ended = moment or (request["ended_at"] if request else None)
        model_info = value.get("modelInfo")
        model = str_or_none(model_info.get("modelId")) if isinstance(model_info, dict) else None
        return Exchange(
            line=line,
            messages=TranscriptView(self._transcript, len(self._transcript)),
            normalize=anthropic.normalize_message,
            model=model,
            response=response,
            response_raw=value,
            stop_reason="tool_use" if response.tool_uses else "end_turn",
            usage=usage,
            started_at=started,
            ended_at=ended,
            status="error" if info.get("cancelReason") == "streaming_failed" else "ok",
            error=info.get("streamingFailedMessage"),
            extra={k: v for k, v in extra.items() if v is not None},
            loop_key=f"cline-task {self._task or 'task'}",
            loop_label=f"{self._agent} task {self._task}" if self._task else f"{self._agent} task",
            tokens_estimated=usage is None,
        )

    def _project(self) -> str | None:
        for message in self._transcript[:2]:
            match = CWD.search(_first_text(message))
            if match:
                return match.group(1).strip()
        return None
