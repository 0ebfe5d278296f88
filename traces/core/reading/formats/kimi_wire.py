"""Kimi Code CLI wire logs: the agent's own event log, rebuilt into the model calls it made.

Kimi Code (Moonshot's coding agent) writes one JSON event per line, `{type, time (epoch
ms), ...}`, to the session's wire log (`~/.kimi-code/sessions/wd_<project>_<hash>/
session_<uuid>/agents/main/...`; a subagent's log sits under `agents/agent-<n>/`), wire
protocol 1.4. Every choice below was checked against the files of SOURCES.md section 22
(whose author replaced some long values with "[trimmed for fixture]": those are read as
the text they are).

- The transcript is rebuilt from the log as OpenAI Chat messages (Kimi's API is
  OpenAI-compatible; the Chat dialect normalises them): `context.append_message` adds a
  user message (the prompt, or a `<system-reminder>` injection the agent adds, kept: the
  model was sent it); a step's `content.part`s (think → `reasoning_content`, text →
  content) and `tool.call {toolCallId, name, args}` events make the assistant message;
  each `tool.result {toolCallId, result{output, isError}}` is one `role:"tool"` message
  after it, flagged `is_error` (read by this module's normaliser). This matches the
  `messageCount` every loop `llm.request` records (checked on every request of the corpus;
  a compaction request's count is one more: its instruction is not in the log).
- A model call is an answered request: one `usage.record` (what counts.json counts). The
  request is the `llm.request` before it (`kind` loop or compaction, model, maxTokens);
  its usage is the record's (`inputOther` is the uncached input, `inputCacheRead`,
  `inputCacheCreation`, `output`); `step.end` adds the stop reason (`finishReason`), the
  response id (`messageId`) and the latencies, kept in `extra`. Start is the request's
  time, end the step's end. A step that ends with no `usage.record` after it is still a
  call (with the step's usage). An `llm.request` that nothing answers (a retry, a turn
  steered or cancelled) is not a call; a turn with no answered request leaves the context
  (Kimi sends the next turn without it: the next request's `messageCount` says so).
- A compaction (`full_compaction.begin`, an `llm.request` of kind compaction, its
  `usage.record` of scope session, `context.apply_compaction {summary, contextSummary,
  compactedCount, tokensBefore, tokensAfter}`) is a call of the same loop whose response is
  the summary; the context after it starts again from `contextSummary` (a new transcript,
  so the next call shows the history rewritten). Kimi does not list which user messages
  it keeps (`keptUserMessageCount` only), so only the summary is carried over.
- The system prompt is the latest `config.update.systemPrompt`; the tools are the latest
  `llm.tools_snapshot.tools` ({name, description, parameters}), plus, by name only, the
  `tools.set_active_tools` names the snapshot lacks (the corpus subagent's snapshot was
  trimmed to Bash while it used Glob). A name pattern there (`mcp__*`) leaves the list
  unknown (no tools), as does a trimmed snapshot with no active names. Plan mode
  (`plan_mode.enter/exit`) marks the calls made in it (`extra.plan_mode`); `turn.steer`
  texts and cancelled turns are kept on the next call (`extra.steered`,
  `extra.cancelled_turns`).
- Tool runs: a `ToolTiming` per result, from the `tool.call` time to the `tool.result`
  time, with the result's `isError`.
- Subagents: the main log's `Agent` tool call gets a result starting `agent_id:
  agent-<n>`, and the subagent's own log is `agents/agent-<n>/...` (its first prompt has
  origin `{kind: system_trigger, name: subagent}`). A subagent log read with its parent
  (which the ingest reads first) is linked to that call by the agent id in its file name,
  else by time (its `metadata.created_at` falls inside exactly one Agent call's run).
- `extra.agent_session` on the first call: agent, session id (from a `session_<uuid>`
  folder in the file's name, when uploaded with it) and project (`config.update.cwd`).
- No usage is estimated: every call the wire records carries its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, int_or_none, list_or_empty, str_or_none
from ...model import Exchange, LineError, Message
from ..records import Record
from ..transcript import TranscriptView
from ._index import kimi_wire as scoring
from .base import Adapter, AdapterEvent, Detection
from .chat_results import answer_timing, normalize_message, output_text
from .kimi_messages import (
    LATENCIES,
    AgentCall,
    Step,
    assistant_message,
    chat_tool_call,
    input_text,
    kimi_usage,
    seconds,
    text_part,
)
from .registry import register

SUBAGENT_TOOLS = ("Agent",)
_AGENT_ID = re.compile(r"agent_id:\s*(\S+)")
_FILE_AGENT = re.compile(r"agent-\d+")
_SESSION = re.compile(r"session_([0-9a-fA-F-]{36})")


def _shared_calls(shared: dict[str, Any]) -> list[AgentCall]:
    calls = shared.setdefault(KimiWireAdapter.name, [])
    return calls if isinstance(calls, list) else []


@register
class KimiWireAdapter(Adapter):
    name = "kimi-wire"
    label = "Kimi Code CLI wire log"
    where = (
        "Kimi Code keeps each session under ~/.kimi-code/sessions/wd_<project>_<hash>/"
        "session_<uuid>/: upload the main agent's wire log (agents/main/) and, for "
        "subagents, the logs under agents/agent-<n>/ with it."
    )
    markers = ("type", "time", "event", "message", "usage", "usageScope", "protocol_version")

    @staticmethod
    def normalize(raw: Any) -> Message:
        return normalize_message(raw)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._messages: list[Any] = []
        self._system: str | None = None
        self._snapshot: list[Any] = []
        self._active: list[str] = []
        self._tools: list[Any] = []
        self._step: Step | None = None
        self._held: Step | None = None  # an answered compaction, waiting for its summary
        self._turn_start = 0
        self._turn_answered = True
        self._requests = 0
        self._calls = 0
        self._cancelled = 0
        self._steered: list[str] = []
        self._plan_mode = False
        self._project: str | None = None
        self._created: float | None = None
        self._protocol: str | None = None
        self._subagent = False
        self._tool_calls: dict[str, tuple[str | None, float | None]] = {}
        self._agent_calls = _shared_calls(self.shared)
        self._parent: str | None = None
        self._parent_type: str | None = None

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    # -- records -------------------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        kind = value.get("type") if isinstance(value, dict) else None
        if not isinstance(value, dict) or not isinstance(kind, str):
            yield LineError(record.line, "not a Kimi wire event (no type); skipped")
            return
        if self._held is not None and kind != "context.apply_compaction":
            yield self._exchange(self._held, None)
            self._held = None
        line = record.line
        moment = seconds(value.get("time"))
        if kind == "metadata":
            self._protocol = str_or_none(value.get("protocol_version"))
            self._created = seconds(value.get("created_at"))
        elif kind == "config.update":
            self._config(value)
        elif kind == "llm.tools_snapshot":
            tools = value.get("tools")
            self._snapshot = (
                [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
            )
            self._tools = self._offered()
        elif kind == "tools.set_active_tools":
            self._active = [n for n in list_or_empty(value.get("names")) if isinstance(n, str)]
            self._tools = self._offered()
        elif kind == "turn.prompt":
            self._new_turn(value)
        elif kind == "turn.steer":
            self._steered.append(input_text(value.get("input")))
        elif kind == "turn.cancel":
            self._cancelled += 1
        elif kind in ("plan_mode.enter", "plan_mode.exit"):
            self._plan_mode = kind == "plan_mode.enter"
        elif kind == "context.append_message":
            yield from self._append_message(line, value)
        elif kind == "context.append_loop_event":
            yield from self._loop_event(line, value.get("event"), moment)
        elif kind == "llm.request":
            yield from self._request(line, value, moment)
        elif kind == "usage.record":
            yield from self._usage_record(line, value, moment)
        elif kind == "context.apply_compaction":
            yield from self._apply_compaction(value)

    def close(self) -> Iterator[AdapterEvent]:
        if self._held is not None:
            yield self._exchange(self._held, None)
            self._held = None
        step = self._step
        if step is not None and step.end is not None:
            yield self._exchange(step, None)
        self._step = None

    def no_call_notice(self) -> str | None:
        if self._calls:
            return None
        why = "turns steered/cancelled" if self._cancelled or self._steered else "no answer"
        if self._requests:
            return (
                f"Read as a Kimi Code wire log: {self._requests} requests were sent and "
                f"none was answered ({why}), so it holds no model call. Upload the wire "
                "log of a session whose turns got answers."
            )
        return (
            "Read as a Kimi Code wire log holding only session set-up events (no model "
            "request): upload the wire log of a session that ran a turn."
        )

    # -- events --------------------------------------------------------------------------
    def _offered(self) -> list[Any]:
        """The snapshot's tools, and the active tools it does not describe, by name."""
        if any("*" in name for name in self._active):
            return []
        described = {t.get("name") for t in self._snapshot}
        return self._snapshot + [{"name": n} for n in self._active if n not in described]

    def _config(self, value: dict[str, Any]) -> None:
        prompt = value.get("systemPrompt")
        if isinstance(prompt, str):
            self._system = prompt
        cwd = str_or_none(value.get("cwd"))
        if cwd:
            self._project = cwd

    def _new_turn(self, value: dict[str, Any]) -> None:
        if not self._turn_answered:
            # Kimi drops an unanswered turn's messages from the context it sends next.
            del self._messages[self._turn_start :]
        self._turn_start = len(self._messages)
        self._turn_answered = False
        origin = dict_or_empty(value.get("origin"))
        if not self._requests and origin.get("name") == "subagent":
            self._subagent = True

    def _append_message(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        message = value.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            yield LineError(line, "context.append_message without a message role; skipped")
            return
        raw: dict[str, Any] = {
            "role": message["role"],
            "content": [text_part(p) for p in list_or_empty(message.get("content"))],
        }
        calls = [
            chat_tool_call(c)
            for c in list_or_empty(message.get("toolCalls"))
            if isinstance(c, dict)
        ]
        if calls:
            raw["tool_calls"] = calls
        self._messages.append(raw)

    def _loop_event(self, line: int, event: Any, moment: float | None) -> Iterator[AdapterEvent]:
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            yield LineError(line, "context.append_loop_event without an event type; skipped")
            return
        kind = event["type"]
        if kind == "step.begin":
            yield from self._flush_ended()
            return
        step = self._step
        if kind == "content.part":
            part = dict_or_empty(event.get("part"))
            if step is None:
                yield LineError(line, "content.part outside a request; skipped")
            elif part.get("type") == "think":
                step.blocks.append({"type": "think", "text": str(part.get("think") or "")})
            else:
                step.blocks.append({"type": "text", "text": str(part.get("text") or "")})
        elif kind == "tool.call":
            yield from self._tool_call(line, event, moment)
        elif kind == "tool.result":
            yield from self._tool_result(line, event, moment)
        elif kind == "step.end" and step is not None:
            step.end = event
            step.end_time = moment

    def _tool_call(self, line: int, event: dict[str, Any], moment: float | None) -> Iterator[Any]:
        tool_id = str_or_none(event.get("toolCallId"))
        if not tool_id:
            yield LineError(line, "tool.call without a toolCallId; skipped")
            return
        if self._step is None:
            yield LineError(line, f"tool.call {tool_id} outside a request; skipped")
            return
        name = str_or_none(event.get("name"))
        call = {"id": tool_id, "name": name, "args": event.get("args")}
        self._step.blocks.append({"type": "call", "call": chat_tool_call(call)})
        self._tool_calls[tool_id] = (name, moment)
        if name in SUBAGENT_TOOLS:
            args = dict_or_empty(event.get("args"))
            kind = str_or_none(args.get("subagent_type"))
            self._agent_calls.append(AgentCall(tool_id, moment, subagent_type=kind))

    def _tool_result(self, line: int, event: dict[str, Any], moment: float | None) -> Iterator[Any]:
        tool_id = str_or_none(event.get("toolCallId"))
        result = event.get("result")
        if not tool_id:
            yield LineError(line, "tool.result without a toolCallId; skipped")
            return
        if not isinstance(result, dict):
            yield LineError(line, f"tool.result {tool_id} without a result object; read as empty")
            result = {}
        output = result.get("output")
        text = output if isinstance(output, str) else output_text(output)
        is_error = result.get("isError") is True
        message: dict[str, Any] = {"role": "tool", "tool_call_id": tool_id, "content": text}
        if is_error:
            message["is_error"] = True
        if self._step is not None:
            self._step.results.append(message)
        else:
            self._messages.append(message)
        for call in self._agent_calls:
            if call.tool_id == tool_id:
                call.ended = moment
                found = _AGENT_ID.search(text)
                call.agent_id = found.group(1) if found else None
        # An orphan gets no timing: the next request carries it (it would count twice).
        yield from answer_timing(
            line, tool_id, self._tool_calls.get(tool_id), moment, is_error, text
        )

    def _request(self, line: int, value: dict[str, Any], moment: float | None) -> Iterator[Any]:
        yield from self._flush_ended()
        self._requests += 1
        step = self._step
        if step is not None and (step.blocks or step.results):
            # a new request while the last one streamed parts: keep what it said
            self._messages.extend([assistant_message(step.blocks), *step.results])
        self._step = Step(line, self._messages, len(self._messages), request=value)
        self._step.request["_time"] = moment

    def _usage_record(
        self, line: int, value: dict[str, Any], moment: float | None
    ) -> Iterator[Any]:
        step = self._step
        if step is None:
            yield LineError(line, "usage.record with no llm.request before it; counted anyway")
            step = Step(line, self._messages, len(self._messages))
        self._step = None
        usage = value.get("usage")
        if not isinstance(usage, dict):
            yield LineError(line, "usage.record without a usage object; tokens unknown")
        step.end_time = step.end_time or moment
        if step.request.get("kind") == "compaction":
            step.request["kimi_usage"], step.request["_scope"] = usage, value.get("usageScope")
            self._held = step
            return
        yield self._exchange(step, value)

    def _apply_compaction(self, value: dict[str, Any]) -> Iterator[Exchange]:
        held, self._held = self._held, None
        summary = value.get("summary")
        context = value.get("contextSummary")
        compaction = {
            k: value[k]
            for k in ("compactedCount", "tokensBefore", "tokensAfter", "keptUserMessageCount")
            if k in value
        }
        if held is not None:
            if isinstance(summary, str):
                held.blocks.append({"type": "text", "text": summary})
            held.request["_compaction"] = compaction
            yield self._exchange(held, None)
        self._messages = []  # a new list: earlier requests keep their own views
        if isinstance(context, str):
            self._messages.append({"role": "user", "content": context})
        self._turn_start = 0

    def _flush_ended(self) -> Iterator[Exchange]:
        """A step that ended with no usage.record after it is still an answered call."""
        step = self._step
        if step is not None and step.end is not None:
            self._step = None
            yield self._exchange(step, None)

    # -- the call ------------------------------------------------------------------------
    def _exchange(self, step: Step, record: dict[str, Any] | None) -> Exchange:
        request = step.request
        end = step.end or {}
        usage_raw = request.get("kimi_usage")
        if record is not None:
            usage_raw = record.get("usage")
        if not isinstance(usage_raw, dict):
            usage_raw = end.get("usage")
        response = assistant_message(step.blocks)
        if step.transcript is self._messages:
            self._messages.extend([response, *step.results])
        self._turn_answered = True
        extra: dict[str, Any] = {"request_kind": request.get("kind") or "loop"}
        for source, target in (("messageId", "message_id"), ("finishReason", "finish_reason")):
            if end.get(source) is not None:
                extra[target] = end[source]
        latency = {k: end[k] for k in LATENCIES if int_or_none(end.get(k)) is not None}
        if latency:
            extra["latency_ms"] = latency
        for source, target in (("maxTokens", "max_tokens"), ("modelAlias", "model_alias")):
            if request.get(source) is not None:
                extra[target] = request[source]
        scope = record.get("usageScope") if record is not None else request.get("_scope")
        if scope is not None:
            extra["usage_scope"] = scope
        if "_compaction" in request:
            extra["compaction"] = request["_compaction"]
        if self._plan_mode:
            extra["plan_mode"] = True
        if self._steered:
            extra["steered"], self._steered = self._steered, []
        if self._cancelled:
            extra["cancelled_turns"], self._cancelled = self._cancelled, 0
        if not self._calls:
            extra.update(self._first_extra())
        self._calls += 1
        model = str_or_none(request.get("model"))
        if model is None and record is not None:
            model = str_or_none(record.get("model"))
        return Exchange(
            line=step.line,
            messages=TranscriptView(step.transcript, step.length),
            normalize=self.normalize,
            system=self._system,
            tools=self._tools,
            model=model,
            response=self.normalize(response),
            response_raw=response,
            stop_reason=str_or_none(end.get("finishReason")),
            usage=kimi_usage(usage_raw),
            started_at=request.get("_time"),
            ended_at=step.end_time,
            extra=extra,
            loop_key=f"kimi:{self.source_name}",
            loop_label=self._label(),
            parent_tool_id=self._parent,
        )

    def _first_extra(self) -> dict[str, Any]:
        session: dict[str, Any] = {"agent": "Kimi Code"}
        found = _SESSION.search(self.source_name)
        if found:
            session["session_id"] = found.group(1)
        if self._project:
            session["project"] = self._project
        extra: dict[str, Any] = {"agent_session": session}
        if self._protocol:
            extra["protocol_version"] = self._protocol
        if self._subagent:
            self._link_parent()
        return extra

    def _link_parent(self) -> None:
        """The Agent call of the parent log this subagent log ran under (see docstring)."""
        names = _FILE_AGENT.findall(self.source_name)
        by_id = [c for c in self._agent_calls if names and c.agent_id == names[-1]]
        by_time = [
            c
            for c in self._agent_calls
            if self._created is not None
            and c.started is not None
            and c.started <= self._created + 1
            and (c.ended is None or self._created <= c.ended)
        ]
        linked = by_id or (by_time if len(by_time) == 1 else [])
        if linked:
            self._parent, self._parent_type = linked[0].tool_id, linked[0].subagent_type

    def _label(self) -> str:
        if not self._subagent:
            return "Kimi Code session"
        names = _FILE_AGENT.findall(self.source_name)
        label = f"subagent {names[-1]}" if names else "subagent"
        return label + (f" ({self._parent_type})" if self._parent_type else "")
