"""Message-list transcripts: conversations logged as messages, with no request boundaries.

Shapes read (all seen in the wild):
- tau-bench trajectories (sierra-research/tau-bench `historical_trajectories/*.json`): a
  JSON array of `{task_id, reward, info, traj, trial}` records whose `traj` is an OpenAI
  Chat message list;
- SWE-agent `.traj` files: `{history, trajectory, info: {model_stats}, ...}`. Function-calling
  histories carry `tool_calls`, and their tool messages name the calls they answer in
  `tool_call_ids` (a list); older text-action histories have no tool calls (the command's
  output comes back as a `user` message) and may hold `is_demo` messages, a pasted
  demonstration that no model call produced;
- any `[{role, content, ...}]` list per line, `{"messages": [...]}` per line (OpenAI
  fine-tuning style, optionally with `system`, `tools`, `model`), or one message per record
  (a JSON array of messages, or one message per JSONL line).

Messages are read one at a time, whatever their dialect: OpenAI Chat (string content,
`tool_calls` with JSON-string `arguments`, `role:"tool"` results) or Anthropic (content
blocks with `tool_use` / `tool_result`).

- mini-swe-agent trajectories (SWE-agent/mini-swe-agent, `*.traj.json`): `{info,
  messages, trajectory_format: "mini-swe-agent-1"}`, each assistant message keeping the
  LiteLLM response it came from in `extra.response` (with `model`, `usage`,
  `finish_reason`), its `extra.cost` and `extra.timestamp`; the model configured is
  `info.config.model.model_name`.

Most of these record no call boundaries, so the calls are implied: every assistant
message is one call whose request is every message before it (slices of the same list, so
the builder's prefix comparison is cheap). Each transcript gets its own `loop_key`.
Without usage `tokens_estimated` is set and usage is left for estimation; an assistant
message that keeps its response (mini-swe-agent's `extra.response`) gives that call its
model, usage (LiteLLM's, read as `openhands` reads it), stop reason and recorded cost.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import PurePath
from typing import Any

import orjson

from traces.core.records import dataclass, field, replace

from ...coerce import dict_or_empty, text_of
from ...model import Block, Exchange, LineError, ToolTiming
from ..dialects import openai_chat as chat
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import TranscriptView
from ._index import message_list as scoring
from ._index.message_list import MESSAGE_ROLES
from .base import Adapter, AdapterEvent, Detection
from .message_list_messages import normalize_message, string_or_none
from .openhands import litellm_usage
from .registry import register

SYSTEM_ROLES = frozenset({"system", "developer"})
SWE_STEP_DUPLICATES = frozenset({"action", "observation", "response", "thought", "query"})
"""SWE-agent trajectory step fields that repeat what the history already holds."""
TIMESTAMP_KEYS = ("timestamp", "created_at", "ts")


# -- one transcript ------------------------------------------------------------------------
@dataclass(slots=True)
class _Transcript:
    """One conversation whose assistant messages become calls, scanned incrementally."""

    key: str
    label: str
    messages: list[Any]
    model: str | None = None
    tools: Sequence[Any] = ()
    system: Any = None
    """A record-level system prompt (Anthropic shape); else the system messages' text."""
    first_extra: dict[str, Any] = field(default_factory=dict)
    """Metadata of the whole transcript, given to its first call (loops carry no extra)."""
    step_extra: list[dict[str, Any]] = field(default_factory=list)
    """Per-call metadata, by call ordinal (SWE-agent trajectory steps)."""
    scanned: int = 0
    calls: int = 0
    last_reply: int = -1
    """Index of the latest assistant message that became a call."""
    system_texts: list[str] = field(default_factory=list)
    joined_system: str | None = None

    def calls_until(self, line: int, end: int) -> Iterator[Exchange]:
        """Calls implied by the assistant messages in [scanned, end)."""
        for index in range(self.scanned, end):
            message = self.messages[index]
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role in SYSTEM_ROLES:
                self.system_texts.append(text_of(message.get("content")))
                self.joined_system = None
            elif role == "assistant" and not message.get("is_demo"):
                yield self._exchange(line, index, message)
        self.scanned = end

    def _exchange(self, line: int, index: int, message: dict[str, Any]) -> Exchange:
        response = normalize_message(message)
        extra: dict[str, Any] = {"message_index": index}
        if self.calls == 0:
            extra.update(self.first_extra)
        if self.calls < len(self.step_extra):
            extra["step"] = self.step_extra[self.calls]
        self.calls += 1
        self.last_reply = index
        recorded = _recorded_response(message)
        usage = litellm_usage(recorded.get("usage"))
        # Not recorded: implied by whether the reply asked for tools.
        stop = "tool_use" if response.tool_uses else "end_turn"
        if recorded:
            stop = chat.stop_reason_from(chat.finish_reason_of(recorded), response) or stop
            cost = dict_or_empty(message.get("extra")).get("cost")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool):
                extra["recorded_cost_usd"] = cost
            if isinstance(recorded.get("id"), str):
                extra["response_id"] = recorded["id"]
        model = (
            string_or_none(recorded.get("model"))
            or self.model
            or string_or_none(message.get("model"))
        )
        return Exchange(
            line=line,
            messages=TranscriptView(self.messages, index),
            normalize=normalize_message,
            system=self._system(),
            tools=self.tools,
            model=model,
            response=response,
            response_raw=message,
            stop_reason=stop,
            usage=usage,
            ended_at=_time_of(message),
            extra=extra,
            loop_key=self.key,
            loop_label=self.label,
            tokens_estimated=usage is None,
        )

    def _system(self) -> Any:
        if self.system is not None:
            return self.system
        if not self.system_texts:
            return None
        if len(self.system_texts) == 1:
            return self.system_texts[0]
        if self.joined_system is None:  # joined once, not once per call
            self.joined_system = "\n\n".join(self.system_texts)
        return self.joined_system

    def tail(self) -> list[Any]:
        """The messages after the latest call's reply, which no request carried."""
        return self.messages[self.last_reply + 1 : self.scanned] if self.calls else []

    def extends_to(self, messages: list[Any]) -> bool:
        """Whether `messages` is this transcript grown (a request log, or snapshots).

        Checks the ends only; the builder compares the whole prefix and flags rewrites.
        """
        size = len(self.messages)
        return (
            0 < size <= len(messages)
            and messages[0] == self.messages[0]
            and messages[size - 1] == self.messages[size - 1]
        )


def _time_of(message: dict[str, Any]) -> float | None:
    for key in TIMESTAMP_KEYS:
        if key in message:
            return to_epoch_seconds(message[key])
    stamped = dict_or_empty(message.get("extra")).get("timestamp")  # mini-swe-agent
    return to_epoch_seconds(stamped) if stamped is not None else None


def _recorded_response(message: dict[str, Any]) -> dict[str, Any]:
    """The API response a message keeps (mini-swe-agent's `extra.response`), or {}."""
    response = dict_or_empty(message.get("extra")).get("response")
    return response if isinstance(response, dict) else {}


def _tool_results_in(messages: list[Any]) -> list[Block]:
    return [
        block
        for message in messages
        for block in normalize_message(message).tool_results
        if block.tool_id is not None
    ]


def _tail_timings(line: int, results: list[Block]) -> Iterator[ToolTiming]:
    """Results recorded after the last assistant message, handed over as tool-log results.

    No later call re-sends them, so no request carries them to the builder; without this
    their calls would look dangling although the transcript holds the result (tau-bench
    runs ending on `transfer_to_human_agents`, SWE-agent runs ending on `submit`). They
    show as paired with no result call.
    """
    for block in results:
        yield ToolTiming(
            line,
            block.tool_id or "",
            block.name,
            is_error=block.is_error,
            result_text=block.text,
        )


def _assistant_turns(messages: list[Any]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m, dict) and m.get("role") == "assistant" and not m.get("is_demo")
    )


# -- the adapter ---------------------------------------------------------------------------
@register
class MessageListAdapter(Adapter):
    name = "message-list"
    label = (
        "Message-list transcript (tau-bench, SWE-agent .traj, mini-swe-agent, chat message lists)"
    )
    where = (
        "Benchmark and agent transcripts that keep only the messages: tau-bench "
        "`historical_trajectories/*.json`, SWE-agent `*.traj` files, mini-swe-agent "
        "`*.traj.json` files, or any JSON list of chat messages (`[{role, content}, ...]` "
        'or `{"messages": [...]}` per line).'
    )
    normalize = staticmethod(normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._stream: _Transcript | None = None
        """Messages arriving one per record (a JSON array of messages, or one per line)."""
        self._stream_line = 0
        self._last_line_transcript: _Transcript | None = None
        """The latest per-line transcript, which a later line may extend."""

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        line, value = record.line, record.value
        if isinstance(value, list):
            yield from self._line_transcript(line, value, {})
        elif not isinstance(value, dict):
            yield LineError(line, "not a message list: expected a JSON object or array")
        elif "traj" in value:
            yield from self._tau_bench(line, value)
        elif "history" in value:
            yield from self._swe_agent(line, value)
        elif "messages" in value:
            yield from self._messages_record(line, value)
        elif "role" in value:
            yield from self._single_message(line, value)
        else:
            yield LineError(
                line,
                "no message list found (expected 'traj', 'history', 'messages', "
                "a list of messages or one message with a 'role')",
            )

    # -- per-record transcripts -------------------------------------------------------
    def _tau_bench(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        traj = value["traj"]
        if not isinstance(traj, list):
            yield LineError(line, "'traj' is not a list of messages")
            return
        task, trial = value.get("task_id"), value.get("trial")
        if task is None:
            local = f"record {line}"
        else:
            local = f"task {task}" if trial is None else f"task {task} trial {trial}"
        transcript = _Transcript(
            key=self._key(local),
            label=local,
            messages=traj,
            first_extra={k: v for k, v in value.items() if k != "traj"},
        )
        yield from self._whole(line, transcript)

    def _swe_agent(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        history = value["history"]
        if not isinstance(history, list):
            yield LineError(line, "'history' is not a list of messages")
            return
        first_extra = {k: v for k, v in value.items() if k not in ("history", "trajectory")}
        info = value.get("info")
        if isinstance(info, dict) and isinstance(info.get("model_stats"), dict):
            first_extra["model_stats"] = info["model_stats"]
        steps = value.get("trajectory")
        step_extra: list[dict[str, Any]] = []
        if isinstance(steps, list) and len(steps) == _assistant_turns(history):
            step_extra = [
                {k: v for k, v in step.items() if k not in SWE_STEP_DUPLICATES}
                if isinstance(step, dict)
                else {}
                for step in steps
            ]
        label = PurePath(self.source_name).stem if self.source_name else "SWE-agent trajectory"
        transcript = _Transcript(
            key=self._key(f"trajectory {line}"),
            label=label,
            messages=history,
            model=_swe_agent_model(value),
            first_extra=first_extra,
            step_extra=step_extra,
        )
        yield from self._whole(line, transcript)

    def _messages_record(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        messages = value["messages"]
        if not isinstance(messages, list):
            yield LineError(line, "'messages' is not a list")
            return
        yield from self._line_transcript(line, messages, value)

    def _line_transcript(
        self, line: int, messages: list[Any], record: dict[str, Any]
    ) -> Iterator[AdapterEvent]:
        """A whole conversation on one line, or a grown copy of the previous line's."""
        if not messages:
            yield LineError(line, "the message list is empty")
            return
        previous = self._last_line_transcript
        if previous is not None and previous.extends_to(messages):
            previous.messages = messages
            yield from previous.calls_until(line, len(messages))
            return
        tools = record.get("tools")
        transcript = _Transcript(
            key=self._key(f"record {line}"),
            label=f"conversation at record {line}",
            messages=messages,
            model=string_or_none(record.get("model")) or _configured_model(record),
            tools=tools if isinstance(tools, list) else (),
            system=record.get("system"),
            first_extra={
                k: v for k, v in record.items() if k not in ("messages", "system", "tools", "model")
            },
        )
        self._last_line_transcript = transcript
        yield from self._whole(line, transcript)

    def _whole(self, line: int, transcript: _Transcript) -> Iterator[AdapterEvent]:
        odd = [i for i, m in enumerate(transcript.messages, start=1) if not isinstance(m, dict)]
        if odd:
            yield LineError(
                line,
                f"{len(odd)} message(s) are not JSON objects (first: message {odd[0]}); "
                "kept as text",
            )
        last: Exchange | None = None
        for exchange in transcript.calls_until(line, len(transcript.messages)):
            if last is not None:
                yield last
            last = exchange
        if last is None:
            yield LineError(
                line, "the transcript holds no assistant message, so no model call is implied"
            )
            return
        tail = transcript.tail()
        results = _tool_results_in(tail)
        if tail:
            summary = {"messages": len(tail), "tool_result_ids": [b.tool_id for b in results]}
            last = replace(last, extra={**last.extra, "transcript_tail": summary})
        yield last
        yield from _tail_timings(line, results)

    # -- one message per record -------------------------------------------------------
    def _single_message(self, line: int, value: dict[str, Any]) -> Iterator[AdapterEvent]:
        if value.get("role") not in MESSAGE_ROLES:
            yield LineError(line, f"unknown message role {value.get('role')!r}")
            return
        if self._stream is None:
            self._stream = _Transcript(key=self._key("transcript"), label="transcript", messages=[])
        stream = self._stream
        stream.messages.append(value)
        self._stream_line = line
        yield from stream.calls_until(line, len(stream.messages))

    def close(self) -> Iterator[AdapterEvent]:
        stream = self._stream
        if stream is None or not stream.messages:
            return
        if stream.calls == 0:
            yield LineError(
                1, "the transcript holds no assistant message, so no model call is implied"
            )
            return
        yield from _tail_timings(self._stream_line, _tool_results_in(stream.tail()))

    def _key(self, local: str) -> str:
        """Loop key, unique across the files of one trace."""
        return f"{self.source_name}: {local}" if self.source_name else local


def _configured_model(record: dict[str, Any]) -> str | None:
    """The model a mini-swe-agent run was configured with (`info.config.model.model_name`)."""
    config = dict_or_empty(dict_or_empty(record.get("info")).get("config"))
    return string_or_none(dict_or_empty(config.get("model")).get("model_name"))


def _swe_agent_model(value: dict[str, Any]) -> str | None:
    """The model SWE-agent was configured with (`replay_config.agent.model.name`)."""
    config = value.get("replay_config")
    if isinstance(config, str):
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            return None
    agent = config.get("agent") if isinstance(config, dict) else None
    model = agent.get("model") if isinstance(agent, dict) else None
    name = model.get("name") if isinstance(model, dict) else None
    return name if isinstance(name, str) else None
