"""Continue sessions: `~/.continue/sessions/<id>.json`, listed in `sessions.json`.

Continue (the VS Code / JetBrains assistant) saves each chat as one JSON document
`{sessionId, title, workspaceDirectory, history[], mode?, chatModelTitle?}`; each history
item is `{message, contextItems[], editorState? | promptLogs[]?, toolCallStates[]?,
reasoning?}` and `message` is a ChatMessage: `{role: user|assistant|thinking|system|tool,
content: string | [{type: text|imageUrl}], toolCalls?: [{id, type, function{name,
arguments}}] (assistant), toolCallId (tool), usage?}` (continuedev/continue
core/index.d.ts). Checked against the real 2024 session of SOURCES.md section 26 (chat
mode, 7 GPT-4o replies); the agent-mode fields (tool calls, tool messages,
`toolCallStates`, `usage`) follow the source and are tested on hand-written files.

- Each assistant item is one model call.
- The request: an assistant item's `promptLogs[0].prompt` is what Continue really sent,
  rendered as `<role>\\ncontent\\n\\n` sections. When it parses into such sections the
  request IS those sections (so context Continue added, and history it pruned to fit the
  context window, show as they were: in the real session the 5th request drops the two
  oldest messages), marked `extra.request_from = "promptLogs"`; otherwise, and whenever
  the conversation so far has tool calls (the rendering loses their ids), the request is
  the history before the item (`"history"`). `modelTitle` and `completionOptions` are
  kept as `extra.prompt_log`; the model is `completionOptions.model`.
- Continue records no timestamps and, before agent mode, no usage: such calls are
  `tokens_estimated` and have no times. A message `usage {promptTokens,
  completionTokens, promptTokensDetails.cachedTokens / cacheWriteTokens}` is read as
  OpenAI's (the prompt includes the cached tokens).
- Tools: calls are `message.toolCalls` (or, when absent, the `toolCallStates[].toolCall`
  of the item); results are `role: "tool"` messages (`toolCallId`) and the
  `toolCallStates[].output` of the calling item (status `errored` is an error), each
  reported once as a `ToolTiming` with its text, so a result no later request carried
  (the session ended on a tool) still answers its call. A `thinking` item, or an item's
  `reasoning.text`, is the reasoning of the next reply.
- `sessions.json` (the index `[{sessionId, title, dateCreated, workspaceDirectory}]`) holds
  no call: recognised and said so (`no_call_notice`); uploaded with sessions it adds
  nothing.
- The first call carries `extra.agent_session` {agent "Continue", session_id, project =
  workspaceDirectory}; the title is `extra.title`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, list_or_empty, non_negative, str_or_none, text_of
from ...model import Block, Exchange, LineError, Message, ToolTiming, Usage
from ..dialects import openai_chat
from ..records import Record
from ..transcript import TranscriptView
from ._index import continue_session as scoring
from ._index.continue_session import is_index_entry, is_session
from .base import Adapter, AdapterEvent, Detection
from .registry import register

AGENT = "Continue"
ROLES = ("user", "assistant", "thinking", "system", "tool")
SECTION = re.compile(r"(?:^|\n\n)<(user|assistant|system|tool|thinking)>\n")


def _parts(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [Block("text", text=content, raw=content)] if content else []
    blocks = []
    for part in list_or_empty(content):
        if isinstance(part, dict) and part.get("type") == "text":
            blocks.append(Block("text", text=str(part.get("text") or ""), raw=part))
        elif isinstance(part, dict) and part.get("type") == "imageUrl":
            blocks.append(Block("image", text="[image]", raw=part))
        else:
            blocks.append(Block("other", text=text_of([part]), raw=part))
    return blocks


def normalize_message(raw: Any) -> Message:
    """A Continue ChatMessage (or a section parsed from a prompt log)."""
    if not isinstance(raw, dict):
        return Message("unknown", (Block("other", text=str(raw), raw=raw),))
    role = str(raw.get("role") or "unknown")
    if role == "tool":
        block = Block(
            "tool_result",
            text=text_of(raw.get("content")),
            tool_id=str_or_none(raw.get("toolCallId")),
            raw=raw,
        )
        return Message("tool", (block,))
    if role == "thinking":
        text = text_of(raw.get("content"))
        return Message("assistant", (Block("thinking", text=text, raw=raw),))
    blocks = []
    reasoning = raw.get("reasoning_text")
    if isinstance(reasoning, str) and reasoning:
        blocks.append(Block("thinking", text=reasoning, raw={"reasoning": reasoning}))
    blocks.extend(_parts(raw.get("content")))
    blocks.extend(openai_chat.tool_use_block(call) for call in list_or_empty(raw.get("toolCalls")))
    return Message(role, tuple(blocks))


def parse_prompt(prompt: Any) -> list[dict[str, Any]] | None:
    """A prompt log's `<role>\\ncontent\\n\\n` sections as messages; None if it is not one."""
    if not isinstance(prompt, str):
        return None
    found = list(SECTION.finditer(prompt))
    if not found or found[0].start() != 0:
        return None
    messages = []
    for here, after in zip(found, [*found[1:], None], strict=True):
        end = after.start() if after is not None else len(prompt)
        messages.append({"role": here.group(1), "content": prompt[here.end() : end]})
    messages[-1]["content"] = messages[-1]["content"].removesuffix("\n\n")
    return messages


def usage_from(raw: Any) -> Usage | None:
    if not isinstance(raw, dict) or "promptTokens" not in raw:
        return None
    details = dict_or_empty(raw.get("promptTokensDetails"))
    prompt = non_negative(raw.get("promptTokens"))
    cached = min(non_negative(details.get("cachedTokens")), prompt)
    written = min(non_negative(details.get("cacheWriteTokens")), prompt - cached)
    return Usage(
        input_tokens=prompt - cached - written,
        output_tokens=non_negative(raw.get("completionTokens")),
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


@register
class ContinueAdapter(Adapter):
    name = "continue"
    label = "Continue session"
    where = (
        "Continue keeps each chat in ~/.continue/sessions/<session id>.json (listed in "
        "sessions.json beside them): upload the <session id>.json files."
    )
    markers = ("sessionId", "history", "workspaceDirectory", "title")
    normalize = staticmethod(normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._indexed: list[str] = []
        self._calls = 0

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def no_call_notice(self) -> str | None:
        if not self._indexed or self._calls:
            return None
        count = len(self._indexed)
        names = ", ".join(f"{s}.json" for s in self._indexed[:3])
        more = ", ..." if count > 3 else ""
        return (
            f"This is Continue's session index (sessions.json), listing {count} "
            f"session{'s' if count != 1 else ''}: upload the session files beside it "
            f"({names}{more})."
        )

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if is_index_entry(value):
            self._indexed.append(str(value.get("sessionId")))
            return
        if not is_session(value):
            yield LineError(record.line, "expected a Continue session (sessionId and history)")
            return
        events = list(_Session(record.line, value, first=self._calls == 0).read())
        self._calls += sum(isinstance(e, Exchange) for e in events)
        yield from (e for e in events if isinstance(e, LineError))
        yield from (e for e in events if not isinstance(e, LineError))


class _Session:
    def __init__(self, line: int, value: dict[str, Any], first: bool) -> None:
        self.line = line
        self.value = value
        self.first = first
        self.session = str(value.get("sessionId"))
        self.transcript: list[Any] = []
        self.tools_seen = False
        self.results: set[str] = set()
        self.reasoning: list[str] = []

    def read(self) -> Iterator[AdapterEvent]:
        for position, item in enumerate(self.value["history"], start=1):
            if not isinstance(item, dict) or not isinstance(item.get("message"), dict):
                yield LineError(self.line, f"history item #{position} has no 'message' object")
                continue
            message = item["message"]
            role = message.get("role")
            content = message.get("content")
            if role not in ROLES:
                yield LineError(self.line, f"history item #{position}: unknown role {role!r}")
                continue
            if content is not None and not isinstance(content, (str, list)):
                yield LineError(
                    self.line, f"history item #{position}: content is neither text nor parts"
                )
                continue
            if role == "thinking":
                self.reasoning.append(text_of(content))
            elif role == "assistant":
                yield from self._call(position, item, message)
            elif role == "tool":
                yield from self._result(position, message.get("toolCallId"), content, False)
            self.transcript.append(message)

    def _call(
        self, position: int, item: dict[str, Any], message: dict[str, Any]
    ) -> Iterator[AdapterEvent]:
        states = [s for s in list_or_empty(item.get("toolCallStates")) if isinstance(s, dict)]
        response_raw = message
        if not message.get("toolCalls") and states:
            calls = [s.get("toolCall") for s in states if isinstance(s.get("toolCall"), dict)]
            response_raw = {**message, "toolCalls": calls}
        reasoning = dict_or_empty(item.get("reasoning")).get("text")
        if isinstance(reasoning, str) and reasoning:
            self.reasoning.append(reasoning)
        if self.reasoning:
            response_raw = {**response_raw, "reasoning_text": "\n".join(self.reasoning)}
            self.reasoning = []
        response = normalize_message(response_raw)
        log = next((p for p in list_or_empty(item.get("promptLogs")) if isinstance(p, dict)), {})
        options = dict_or_empty(log.get("completionOptions"))
        parsed = None if self.tools_seen else parse_prompt(log.get("prompt"))
        messages: Sequence[Any] = (
            parsed if parsed is not None else TranscriptView(self.transcript, len(self.transcript))
        )
        usage = usage_from(message.get("usage"))
        extra: dict[str, Any] = {
            "session_id": self.session,
            "history_item": position,
            "message_id": message.get("id"),
            "request_from": "promptLogs" if parsed is not None else "history",
            "stop_reason_inferred": True,
        }
        if log:
            extra["prompt_log"] = {
                "model_title": log.get("modelTitle"),
                "model_provider": log.get("modelProvider"),
                "completion_options": options or None,
            }
            if parsed is None and isinstance(log.get("prompt"), str):
                extra["prompt_log"]["prompt"] = log["prompt"]
        if self.first:
            extra["agent_session"] = {"agent": AGENT, "session_id": self.session}
            project = str_or_none(self.value.get("workspaceDirectory"))
            if project:
                extra["agent_session"]["project"] = project
            if self.value.get("title"):
                extra["title"] = self.value["title"]
            self.first = False
        if response.tool_uses:
            self.tools_seen = True
        yield Exchange(
            line=self.line,
            messages=messages,
            normalize=normalize_message,
            system=openai_chat.system_of(messages),
            model=str_or_none(options.get("model"))
            or str_or_none(log.get("modelTitle"))
            or str_or_none(self.value.get("chatModelTitle")),
            response=response,
            response_raw=response_raw,
            stop_reason="tool_use" if response.tool_uses else "end_turn",
            usage=usage,
            extra={k: v for k, v in extra.items() if v is not None},
            loop_key=f"continue {self.session}",
            loop_label=f"Continue session {self.session}",
            tokens_estimated=usage is None,
        )
        for state in states:
            output = state.get("output")
            status = state.get("status")
            if output is None and status != "errored":
                continue
            text = "\n".join(
                text_of(o.get("content")) for o in list_or_empty(output) if isinstance(o, dict)
            )
            yield from self._result(position, state.get("toolCallId"), text, status == "errored")

    def _result(
        self, position: int, tool_id: Any, content: Any, is_error: bool
    ) -> Iterator[AdapterEvent]:
        if not isinstance(tool_id, str) or not tool_id:
            yield LineError(
                self.line, f"history item #{position}: a tool result without a toolCallId"
            )
            return
        self.tools_seen = True
        if tool_id in self.results:
            return
        self.results.add(tool_id)
        yield ToolTiming(self.line, tool_id, is_error=is_error, result_text=text_of(content))
