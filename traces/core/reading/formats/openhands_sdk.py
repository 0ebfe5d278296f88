"""OpenHands SDK / CLI v1 conversations: a folder of events, rebuilt into the model calls.

The OpenHands software-agent SDK (and the CLI v1 built on it) keeps each conversation in
`~/.openhands/conversations/<id>/`: `base_state.json` (the agent and its LLM settings, the
api key masked, the execution status and `stats`) and `events/event-<seq>-<uuid>.json`,
one event per file. The SDK's tests also keep events as JSONL, one per line. This is not
the V0 event stream (`openhands-events`): events have a `kind` (`SystemPromptEvent`,
`MessageEvent`, `ActionEvent`, `ObservationEvent`, `AgentErrorEvent`,
`ConversationStateUpdateEvent`) and no `tool_call_metadata`. Every choice below was checked
against the files of SOURCES.md section 24.

- Order: event files are read in the order of the sequence number in their name, whatever
  order they were given in (each file waits until the ones before it were read; a file
  whose predecessors never come stays unread). JSONL events are read in line order.
- A model call is a distinct `llm_response_id` (agent `ActionEvent`s and `MessageEvent`s):
  the actions of one response are its parallel batch. The request is everything before
  it, rebuilt as OpenAI Chat messages (the SDK's LLM layer is LiteLLM's Chat format; the
  Chat dialect reads them): the system prompt and tool list of the `SystemPromptEvent`
  (tools named by their `title`), user messages, earlier responses (reasoning_content and
  thinking blocks as reasoning, `thought` and message text as content, each action's
  `tool_call` as a tool call with its JSON `arguments`) and one `role:"tool"` message per
  observation, flagged `is_error` (read by the Kimi reader's normaliser, shared).
- A result answers the action whose `tool_call_id` it names; it is an error when
  `observation.is_error` is true or its `exit_code` is non-zero, and an `AgentErrorEvent`
  is always an error result. `finish` is answered by a `FinishObservation` here (unlike
  V0), so it is an ordinary tool run; the call that asked for it lists it in
  `extra.terminal_tool_ids`, so a run ending on it reads as finished, not halted. A
  `ToolTiming` gives each run's start (the action's timestamp) and end (the
  observation's); a result whose action is not in the file (an excerpt) is an orphan,
  carried by the next request.
- Usage: `base_state.json` `stats.usage_to_metrics.*.token_usages` gives each response's
  tokens by `response_id` (prompt tokens include the cache reads and writes, taken out
  here), `costs` (in the same order) its cost (`extra.recorded_cost_usd`) and
  `response_latencies` its latency. The ingest reads base_state.json first (it sorts
  before events/); calls read before it (a folder given in another order) have no usage.
  Without base_state (the JSONL excerpt) no call has usage: tokens are estimated, and the
  latest `stats` state update (running totals) is kept on the next call
  (`extra.accumulated_usage`).
- The model is base_state's `agent.llm.model`, else the stats' `model_name`; the first call
  carries `extra.agent_session` (agent, conversation id, workspace `working_dir`) and the
  execution status. A call starts at its latency before its first event (base_state), else
  at the event before it other than a state update (those are written after a response).
  `ConversationStateUpdateEvent`s are kept on the next call
  (`extra.state_updates`, keys and values other than stats).
- base_state.json alone holds no call: it is said so (`no_call_notice`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ...coerce import (
    dict_or_empty,
    int_or_none,
    int_or_zero,
    list_or_empty,
    str_or_none,
)
from ...model import Exchange, LineError, Message, Usage
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import TranscriptView
from ._index import openhands_sdk as scoring
from ._index.openhands_sdk import _is_base_state, _is_event
from .base import Adapter, AdapterEvent, Detection
from .chat_results import answer_timing, normalize_message
from .registry import register

FINISH_TOOLS = ("finish",)
_SEQ = re.compile(r"event-(\d+)-[^/\\]*$")


@dataclass
class _Response:
    response_id: str
    line: int
    message: dict[str, Any]
    moment: float | None
    event_id: Any
    started: float | None


@dataclass
class _Conversation:
    """What the files of one conversation share."""

    messages: list[Any] = field(default_factory=list)
    system: str | None = None
    tools: list[Any] = field(default_factory=list)
    model: str | None = None
    session: dict[str, Any] = field(default_factory=dict)
    status: str | None = None
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    costs: dict[str, float] = field(default_factory=dict)
    latencies: dict[str, float] = field(default_factory=dict)
    responses: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Every response read, by id, with its message (later actions of a batch join it)."""
    current: _Response | None = None
    actions: dict[str, tuple[str | None, float | None]] = field(default_factory=dict)
    pending: dict[int, tuple[int, Any, str]] = field(default_factory=dict)
    next_seq: int = 0
    last_time: float | None = None
    states: list[dict[str, Any]] = field(default_factory=list)
    stats: Any = None
    calls: int = 0
    base_state_responses: int | None = None


@register
class OpenHandsSdkAdapter(Adapter):
    name = "openhands-sdk"
    label = "OpenHands SDK conversation"
    where = (
        "The OpenHands SDK and CLI v1 keep each conversation in "
        "~/.openhands/conversations/<id>/: upload the whole folder (base_state.json and "
        "events/event-*.json), as a ZIP or as its files."
    )
    markers = ("id", "timestamp", "source", "kind", "llm_response_id", "tool_call_id")

    @staticmethod
    def normalize(raw: Any) -> Message:
        return normalize_message(raw)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        state = self.shared.get(self.name)
        if not isinstance(state, _Conversation):
            state = _Conversation()
            self.shared[self.name] = state
        self._c: _Conversation = state
        found = _SEQ.search(source_name)
        self._seq = int(found.group(1)) if found else None
        self._saw_base_state = False

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    # -- records -------------------------------------------------------------------------
    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if _is_base_state(value):
            self._saw_base_state = True
            self._base_state(value)
            return
        if not _is_event(value):
            yield LineError(record.line, "not an OpenHands SDK event (no known kind, timestamp)")
        elif self._seq is not None:
            self._c.pending[self._seq] = (record.line, value, self.source_name)
        else:
            yield from self._event(record.line, value)

    def close(self) -> Iterator[AdapterEvent]:
        c = self._c
        while c.next_seq in c.pending:
            line, event, _ = c.pending.pop(c.next_seq)
            c.next_seq += 1
            yield from self._event(line, event)
        yield from self._flush()

    def no_call_notice(self) -> str | None:
        if self._c.calls:
            return None
        if self._saw_base_state:
            count = self._c.base_state_responses
            said = f", stats of {count} responses" if count else ""
            return (
                "Read as an OpenHands SDK conversation's base_state.json (agent and LLM "
                f"settings{said}): it holds no event. Upload the whole conversation folder "
                "(base_state.json with its events/ folder)."
            )
        return (
            "Read as OpenHands SDK events holding no agent response (no llm_response_id): "
            "upload the whole conversation folder."
        )

    # -- base_state.json ---------------------------------------------------------------
    def _base_state(self, value: dict[str, Any]) -> None:
        c = self._c
        llm = dict_or_empty(dict_or_empty(value.get("agent")).get("llm"))
        c.model = str_or_none(llm.get("model")) or c.model
        if isinstance(value.get("id"), str):
            c.session["session_id"] = value["id"]
        directory = str_or_none(dict_or_empty(value.get("workspace")).get("working_dir"))
        if directory:
            c.session["project"] = directory
        c.status = str_or_none(value.get("execution_status"))
        metrics = dict_or_empty(dict_or_empty(value.get("stats")).get("usage_to_metrics"))
        responses = 0
        for metric in metrics.values():
            metric = dict_or_empty(metric)
            usages = list_or_empty(metric.get("token_usages"))
            costs = list_or_empty(metric.get("costs"))
            for position, usage in enumerate(usages):
                response_id = str_or_none(dict_or_empty(usage).get("response_id"))
                if not response_id:
                    continue
                responses += 1
                c.usage[response_id] = usage
                cost = (
                    dict_or_empty(costs[position]).get("cost")
                    if len(costs) == len(usages)
                    else None
                )
                if isinstance(cost, (int, float)) and not isinstance(cost, bool):
                    c.costs[response_id] = float(cost)
            for latency in list_or_empty(metric.get("response_latencies")):
                latency = dict_or_empty(latency)
                seconds = latency.get("latency")
                response_id = str_or_none(latency.get("response_id"))
                if response_id and isinstance(seconds, (int, float)):
                    c.latencies[response_id] = float(seconds)
        c.base_state_responses = responses

    # -- events ------------------------------------------------------------------------
    def _event(self, line: int, event: dict[str, Any]) -> Iterator[AdapterEvent]:
        c = self._c
        kind = event["kind"]
        moment = to_epoch_seconds(event.get("timestamp"))
        response_id = str_or_none(event.get("llm_response_id"))
        agent_turn = event.get("source") == "agent" and kind in ("ActionEvent", "MessageEvent")
        if not (agent_turn and response_id and c.current and c.current.response_id == response_id):
            yield from self._flush()
        if kind == "SystemPromptEvent":
            self._system_prompt(event)
        elif kind == "MessageEvent" and not agent_turn:
            message = dict_or_empty(event.get("llm_message"))
            role = str_or_none(message.get("role")) or "user"
            c.messages.append({"role": role, "content": _text(message.get("content"))})
        elif agent_turn:
            yield from self._agent(line, event, response_id, moment)
        elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            yield from self._result(line, event, kind, moment)
        elif kind == "ConversationStateUpdateEvent":
            key = event.get("key")
            if key == "stats":
                c.stats = event.get("value")
            else:
                c.states.append({"key": key, "value": event.get("value")})
        if moment is not None and kind != "ConversationStateUpdateEvent":
            c.last_time = moment  # state updates follow a response: they start nothing

    def _system_prompt(self, event: dict[str, Any]) -> None:
        prompt = event.get("system_prompt")
        text = dict_or_empty(prompt).get("text") if isinstance(prompt, dict) else prompt
        self._c.system = text if isinstance(text, str) else None
        tools = []
        for tool in list_or_empty(event.get("tools")):
            if not isinstance(tool, dict):
                continue
            entry = {"name": tool.get("title") or tool.get("name"), **tool}
            schema = tool.get("parameters") or tool.get("input_schema")
            if schema is not None:
                entry["input_schema"] = schema
            tools.append(entry)
        self._c.tools = tools

    def _agent(
        self, line: int, event: dict[str, Any], response_id: str | None, moment: float | None
    ) -> Iterator[AdapterEvent]:
        c = self._c
        reasoning, text = _agent_text(event)
        calls: list[dict[str, Any]] = []
        call = dict_or_empty(event.get("tool_call"))
        if event["kind"] == "ActionEvent":
            tool_id = str_or_none(event.get("tool_call_id")) or str_or_none(call.get("id"))
            if tool_id is None:
                yield LineError(line, "ActionEvent without a tool_call_id; its call is kept")
            else:
                name = str_or_none(event.get("tool_name")) or str_or_none(call.get("name"))
                arguments = call.get("arguments")
                function = {"name": name, "arguments": arguments}
                calls.append({"id": tool_id, "type": "function", "function": function})
                c.actions[tool_id] = (name, moment)
        if response_id is None:
            yield LineError(line, f"{event['kind']} from the agent without llm_response_id")
            c.messages.append(_assistant(reasoning, text, calls))
            return
        known = c.responses.get(response_id)
        if known is not None:  # a later action of a response already read: it joins it
            if reasoning:
                known["reasoning_content"] = (known.get("reasoning_content") or "") + reasoning
            if text:
                known["content"] = (known.get("content") or "") + text
            if calls:
                known.setdefault("tool_calls", []).extend(calls)
            return
        message = _assistant(reasoning, text, calls)
        c.responses[response_id] = message
        c.current = _Response(response_id, line, message, moment, event.get("id"), c.last_time)

    def _result(
        self, line: int, event: dict[str, Any], kind: str, moment: float | None
    ) -> Iterator[AdapterEvent]:
        c = self._c
        tool_id = str_or_none(event.get("tool_call_id"))
        if tool_id is None:
            yield LineError(line, f"{kind} without a tool_call_id; not a result")
            return
        observation = event.get("observation")
        if kind == "AgentErrorEvent":
            text, is_error = str(event.get("error") or ""), True
        elif isinstance(observation, dict):
            text = _text(observation.get("content"))
            code = int_or_none(observation.get("exit_code"))
            is_error = observation.get("is_error") is True or (code is not None and code != 0)
        else:
            yield LineError(line, f"{kind} {tool_id} without an observation object; read as empty")
            text, is_error = "", kind == "UserRejectObservation"
        result: dict[str, Any] = {"role": "tool", "tool_call_id": tool_id, "content": text}
        if is_error:
            result["is_error"] = True
        c.messages.append(result)
        # An orphan gets no timing: the next request carries it.
        yield from answer_timing(line, tool_id, c.actions.get(tool_id), moment, is_error, text)

    # -- the call ------------------------------------------------------------------------
    def _flush(self) -> Iterator[Exchange]:
        c = self._c
        current, c.current = c.current, None
        if current is None:
            return
        request = TranscriptView(c.messages, len(c.messages))
        started = current.started
        c.messages.append(current.message)
        rid = current.response_id
        extra: dict[str, Any] = {"response_id": rid, "event_id": current.event_id}
        if rid in c.costs:
            extra["recorded_cost_usd"] = c.costs[rid]
        if rid in c.latencies:
            extra["latency_s"] = c.latencies[rid]
            if current.moment is not None:
                started = current.moment - c.latencies[rid]
        finishing = [
            call["id"]
            for call in current.message.get("tool_calls") or ()
            if call["function"]["name"] in FINISH_TOOLS
        ]
        if finishing:
            extra["terminal_tool_ids"] = finishing  # the agent finished: it did not halt
        if c.states:
            extra["state_updates"], c.states = c.states, []
        usage = _usage(c.usage.get(rid))
        if usage is None and c.stats is not None:
            extra["accumulated_usage"] = _accumulated(c.stats)
        if not c.calls:
            extra["agent_session"] = {"agent": "OpenHands", **c.session}
            if c.status:
                extra["execution_status"] = c.status
        c.calls += 1
        yield Exchange(
            line=current.line,
            messages=request,
            normalize=self.normalize,
            system=c.system,
            tools=c.tools,
            model=c.model or _stats_model(c.stats),
            response=self.normalize(current.message),
            response_raw=dict(current.message),
            stop_reason="tool_use" if current.message.get("tool_calls") else "end_turn",
            usage=usage,
            started_at=started,
            ended_at=current.moment,
            extra=extra,
            loop_key="openhands-sdk:conversation",
            loop_label="OpenHands agent",
            tokens_estimated=usage is None,
        )


def _content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    out = []
    for part in list_or_empty(content):
        if isinstance(part, dict) and part.get("type") == "text":
            out.append({"type": "text", "text": str(part.get("text") or "")})
        elif isinstance(part, dict) and part.get("type") == "image":
            out.append({"type": "image"})
        elif part is not None:
            out.append({"type": "text", "text": str(part)})
    return out


def _text(content: Any) -> str:
    return "".join(b["text"] for b in _content(content) if b.get("type") == "text")


def _agent_text(event: dict[str, Any]) -> tuple[str, str]:
    """Reasoning, and the text the agent wrote (an action's `thought`, a message's text)."""
    message = dict_or_empty(event.get("llm_message"))
    reasoning = event.get("reasoning_content") or message.get("reasoning_content")
    parts = [reasoning] if isinstance(reasoning, str) else []
    for block in list_or_empty(event.get("thinking_blocks") or message.get("thinking_blocks")):
        if isinstance(block, dict) and isinstance(block.get("thinking"), str):
            parts.append(block["thinking"])
    text = _text(event.get("thought")) + _text(message.get("content"))
    return "".join(parts), text


def _assistant(reasoning: str, text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    return message


def _usage(raw: Any) -> Usage | None:
    """The SDK's TokenUsage (LiteLLM's): prompt tokens include the cached ones."""
    if not isinstance(raw, dict):
        return None
    read = int_or_zero(raw.get("cache_read_tokens"))
    written = int_or_zero(raw.get("cache_write_tokens"))
    return Usage(
        input_tokens=max(0, int_or_zero(raw.get("prompt_tokens")) - read - written),
        output_tokens=int_or_zero(raw.get("completion_tokens")),
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def _metrics(stats: Any) -> list[dict[str, Any]]:
    metrics = dict_or_empty(dict_or_empty(stats).get("usage_to_metrics"))
    return [m for m in metrics.values() if isinstance(m, dict)]


def _accumulated(stats: Any) -> dict[str, Any]:
    return {
        name: dict_or_empty(metric.get("accumulated_token_usage"))
        | {"accumulated_cost": metric.get("accumulated_cost")}
        for name, metric in dict_or_empty(dict_or_empty(stats).get("usage_to_metrics")).items()
        if isinstance(metric, dict)
    }


def _stats_model(stats: Any) -> str | None:
    for metric in _metrics(stats):
        name = str_or_none(metric.get("model_name"))
        if name:
            return name
    return None
