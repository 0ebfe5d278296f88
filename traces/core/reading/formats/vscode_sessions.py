"""VS Code Copilot Chat sessions: `User/workspaceStorage/<hash>/chatSessions/<id>.json`.

VS Code serialises each chat panel session as one JSON document (`ISerializableChatData`
of microsoft/vscode `src/vs/workbench/contrib/chat/common/chatModel.ts`): `{version,
sessionId, creationDate, lastMessageDate, requesterUsername, responderUsername,
customTitle, requests[]}`; each request is one user turn `{requestId, message{text},
variableData, response[], result{timings, metadata, errorDetails}, isCanceled,
timestamp, modelId}`. No real file was shared with this project: the reader follows the
source (chatModel.ts for the session and request fields; microsoft/vscode-copilot-chat
`IToolCallRound {id, response, toolInputRetry, toolCalls[{name, arguments, id}],
thinking?, timestamp?}` for what Copilot keeps in `result.metadata`) and the shape of a
session file published as a test fixture (git-ai), read but not copied.

- A model call is one tool-call round of `result.metadata.toolCallRounds`: the agent
  loop asks the model once per round; the round's `response` text, `thinking.text` and
  `toolCalls` (arguments a JSON string) make the response. A request with no rounds
  (ask mode, older sessions) is one call whose response is the text of its `response[]`
  markdown parts.
- The request of a call is rebuilt as Chat messages: per turn, the user message as it
  was sent (`metadata.renderedUserMessage` text parts, prompt-cache breakpoints dropped;
  else `message.text`), then each round's response and one `role:"tool"` message per
  result of `metadata.toolCallResults` (by id; the text of its content parts, or of the
  prompt-tsx tree a part holds). The system prompt and tool list are not stored.
- Tool ids carry the `__vscode-<n>` suffix in both rounds and results; it is removed (as
  in the prompt-log export) so ids read as the model saw them.
- Usage is not stored per round: calls carry none (≈ estimates); the turn's totals,
  when stored (`metadata.promptTokens/outputTokens` or `result.usage`), are kept on its
  first call (`extra.turn_usage`).
- Times: a round's `timestamp` (newer versions) starts it; otherwise the turn's first
  call starts at the request's `timestamp` and its last ends `timings.totalElapsed`
  later. `isCanceled` marks the turn's last call (`extra.canceled`); `errorDetails` makes
  it a failed call (a turn that failed before any round is one failed call).
- `modelId` ("copilot/claude-sonnet-4") is read without its `copilot/` prefix.
- The session id is recorded on the first call (`extra.agent_session`); the project is
  not in the file (the workspace is the storage folder's hash).
- A session with no request holds no call: `no_call_notice` says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, int_or_none, str_or_none
from ...model import Exchange, LineError, ToolTiming
from ..dialects import openai_chat
from ..records import Record
from ..transcript import TranscriptView
from ._index import vscode_sessions as scoring
from ._index.vscode_sessions import _is_session
from .base import Adapter, AdapterEvent, Detection
from .registry import register
from .vscode_chatreplay import CACHE_BREAKPOINT, plain_id

AGENT = "VS Code Copilot Chat"


@register
class VscodeSessionsAdapter(Adapter):
    name = "vscode-copilot-sessions"
    label = "VS Code Copilot Chat session"
    where = (
        "VS Code keeps each chat session in its user data folder: "
        "User/workspaceStorage/<hash>/chatSessions/<session id>.json (or "
        "User/globalStorage/emptyWindowChatSessions/ for a window without a folder)."
    )
    markers = ("version", "sessionId", "requesterUsername", "responderUsername", "requests")
    normalize = staticmethod(openai_chat.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._messages: list[Any] = []
        self._calls = 0
        self._sessions = 0
        self._session_id: str | None = None

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        session = record.value
        if not _is_session(session):
            yield LineError(record.line, "not a VS Code chat session (no requests list)")
            return
        self._sessions += 1
        self._session_id = str_or_none(session.get("sessionId")) or self._session_id
        for number, request in enumerate(session["requests"], start=1):
            if not isinstance(request, dict):
                yield LineError(number, f"request {number} is not an object; skipped")
                continue
            yield from self._turn(number, request)

    def no_call_notice(self) -> str | None:
        if self._calls or not self._sessions:
            return None
        return (
            f"This is a VS Code Copilot Chat session ({self._session_id or 'no id'}) with no "
            "answered request: there is no model call to show. Upload a chatSessions/*.json "
            "file of a chat that got an answer."
        )

    # -- turns --------------------------------------------------------------------------
    def _turn(self, number: int, request: dict[str, Any]) -> Iterator[AdapterEvent]:
        result = dict_or_empty(request.get("result"))
        metadata = dict_or_empty(result.get("metadata"))
        user = _user_text(request, metadata)
        if user is None:
            yield LineError(number, f"request {number} has no message text; skipped")
            return
        self._messages.append({"role": "user", "content": user})
        rounds = metadata.get("toolCallRounds")
        if rounds is not None and not isinstance(rounds, list):
            yield LineError(number, f"request {number}: toolCallRounds is not a list")
            rounds = None
        rounds = [r for r in rounds or [] if isinstance(r, dict)]
        if not rounds:
            text = _markdown_text(request.get("response"))
            if text or result:
                rounds = [{"response": text, "toolCalls": []}]
        results = dict_or_empty(metadata.get("toolCallResults"))
        start = _millis(request.get("timestamp"))
        elapsed = int_or_none(dict_or_empty(result.get("timings")).get("totalElapsed"))
        end = start + elapsed / 1000 if start is not None and elapsed is not None else None
        error = dict_or_empty(result.get("errorDetails"))
        for index, round_ in enumerate(rounds):
            last = index == len(rounds) - 1
            started = _millis(round_.get("timestamp"))
            if started is None and index == 0:
                started = start
            following = rounds[index + 1].get("timestamp") if not last else None
            ended = end if last else _millis(following)
            extra: dict[str, Any] = {"request_id": request.get("requestId"), "round": index}
            if round_.get("id") is not None:
                extra["round_id"] = round_.get("id")
            if index == 0:
                usage = _turn_usage(result, metadata)
                if usage:
                    extra["turn_usage"] = usage
            if last and request.get("isCanceled") is True:
                extra["canceled"] = True
            failed = last and bool(error)
            yield self._exchange(number, request, round_, started, ended, extra, failed, error)
            yield from self._tool_results(number, round_, results)

    def _exchange(
        self,
        number: int,
        request: dict[str, Any],
        round_: dict[str, Any],
        started: float | None,
        ended: float | None,
        extra: dict[str, Any],
        failed: bool,
        error: dict[str, Any],
    ) -> Exchange:
        text = round_.get("response")
        reply: dict[str, Any] = {
            "role": "assistant",
            "content": text if isinstance(text, str) and text else None,
        }
        thinking = dict_or_empty(round_.get("thinking")).get("text")
        if isinstance(thinking, list):
            thinking = "".join(t for t in thinking if isinstance(t, str))
        if isinstance(thinking, str) and thinking:
            reply["reasoning_content"] = thinking
        calls = [_tool_call(c) for c in round_.get("toolCalls") or [] if isinstance(c, dict)]
        if calls:
            reply["tool_calls"] = calls
        if self._calls == 0:
            session = {"agent": AGENT}
            if self._session_id:
                session["session_id"] = self._session_id
            extra["agent_session"] = session
        self._calls += 1
        message = openai_chat.normalize_message(reply)
        request_messages = TranscriptView(self._messages, len(self._messages))
        self._messages.append(reply)
        model = str_or_none(request.get("modelId"))
        return Exchange(
            line=number,
            messages=request_messages,
            normalize=self.normalize,
            model=model.removeprefix("copilot/") if model else None,
            response=message,
            response_raw=round_,
            stop_reason="tool_use" if message.tool_uses else "end_turn",
            started_at=started,
            ended_at=ended,
            status="error" if failed else "ok",
            error=(str_or_none(error.get("message")) or "failed") if failed else None,
            extra=extra,
            loop_key=f"{self.name}:{self._session_id or self.source_name}",
            loop_label="Copilot Chat session",
            tokens_estimated=True,
        )

    def _tool_results(
        self, number: int, round_: dict[str, Any], results: dict[str, Any]
    ) -> Iterator[ToolTiming]:
        """The round's results: in the transcript, and as tool logs (so a result that no
        later call carried, after a cancel, still counts as the tool's answer)."""
        for call in round_.get("toolCalls") or []:
            tool_id = str_or_none(call.get("id")) if isinstance(call, dict) else None
            if tool_id is None or tool_id not in results:
                continue
            text = _result_text(results[tool_id])
            plain = plain_id(tool_id)
            self._messages.append({"role": "tool", "tool_call_id": plain, "content": text})
            yield ToolTiming(number, plain, result_text=text)


def _user_text(request: dict[str, Any], metadata: dict[str, Any]) -> str | None:
    rendered = metadata.get("renderedUserMessage")
    if isinstance(rendered, list):
        texts = [
            p["text"]
            for p in rendered
            if isinstance(p, dict)
            and p.get("type") != CACHE_BREAKPOINT
            and isinstance(p.get("text"), str)
        ]
        if texts:
            return "".join(texts)
    message = request.get("message")
    if isinstance(message, str):
        return message
    text = dict_or_empty(message).get("text")
    return text if isinstance(text, str) else None


def _markdown_text(parts: Any) -> str:
    """The markdown parts of a response (`{value}` without a kind, or kind markdownContent)."""
    if not isinstance(parts, list):
        return ""
    texts = []
    for part in parts:
        if not isinstance(part, dict) or part.get("kind") not in (None, "markdownContent"):
            continue
        value = part.get("value")
        if isinstance(value, dict):
            value = value.get("value")
        if isinstance(value, str):
            texts.append(value)
    return "".join(texts)


def _tool_call(call: dict[str, Any]) -> dict[str, Any]:
    tool_id = str_or_none(call.get("id"))
    return {
        "id": plain_id(tool_id) if tool_id else None,
        "type": "function",
        "function": {"name": str_or_none(call.get("name")), "arguments": call.get("arguments")},
    }


def _result_text(result: Any) -> str:
    """A `LanguageModelToolResult`: its content parts' text (a prompt-tsx part holds a
    tree whose text leaves are joined)."""
    content = dict_or_empty(result).get("content")
    if not isinstance(content, list):
        return ""
    return "".join(_text_of(dict_or_empty(part).get("value")) for part in content)


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return ""
    if isinstance(value.get("text"), str):
        return str(value["text"])
    node = value.get("node")
    if isinstance(node, dict):
        return _text_of(node)
    children = value.get("children")
    if isinstance(children, list):
        return "".join(_text_of(child) for child in children)
    return ""


def _turn_usage(result: dict[str, Any], metadata: dict[str, Any]) -> dict[str, int]:
    usage = dict_or_empty(result.get("usage"))
    found = {
        "prompt_tokens": int_or_none(metadata.get("promptTokens", usage.get("promptTokens"))),
        "output_tokens": int_or_none(metadata.get("outputTokens", usage.get("completionTokens"))),
    }
    return {k: v for k, v in found.items() if v is not None}


def _millis(value: Any) -> float | None:
    number = int_or_none(value)
    return number / 1000 if number is not None and number > 0 else None
