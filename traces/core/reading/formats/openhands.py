"""OpenHands event streams: actions and observations, rebuilt into the model calls behind them.

OpenHands (All-Hands-AI/OpenHands) saves a conversation as a JSON list of events (the
`trajs/*.json` test trajectories, `GET /api/conversations/<id>/events`, the CLI's
`--save-trajectory-path`): `{id, timestamp, source, action|observation, args|extras,
message, content, cause, tool_call_metadata}`. Every choice below was checked against the
files of SOURCES.md section 18.

- A model call is one `tool_call_metadata.model_response` (a LiteLLM-shaped Chat
  Completions response): the actions it produced share its `id` (and repeat it on their
  observations), so the first action with a new response id is the call and the others
  are the rest of its parallel batch. The request is everything before it, rebuilt as
  Chat messages: user `message` actions, agent `message` actions without metadata (plain
  text turns, not model calls of their own: OpenHands records no response for them), the
  earlier responses and one `role:"tool"` message per observation.
- An observation answers the action named by its `cause` (the action's tool call id comes
  from that action's metadata). Its result is an error when the observation is `error` or
  its `extras.metadata.exit_code` is non-zero (the OpenHands runtime's own flag). A
  `ToolTiming` gives the tool's start (the action's timestamp) and end (the observation's).
- `finish` is a tool call that ends the run: by design it never gets an observation, so
  it stays dangling (the corpus counts it so), and the call that asked for it lists it in
  `extra.terminal_tool_ids`, which the dangling-tool-call rule reads as "ends the loop".
- `agent_state_changed` observations and other events with no tool call are not results;
  agent states are kept on the next call (`extra.agent_states`).
- The agent's final message: when the stream ends on an agent `message` action without
  metadata (after it only state changes), that message is how the run ended, so it is a
  model call of its own (`extra.final_message`, no usage: OpenHands recorded none; the
  model of the last response). Without it a run that answered in text after its tools
  would end on its last tool call and read as halted, not finished. Earlier text turns
  stay transcript: a later event shows the run went on, and the corpus counts no call
  for them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, str_or_none
from ...model import Exchange, LineError, ToolTiming, Usage
from ..dialects import openai_chat
from ..records import Record
from ..timeparse import to_epoch_seconds
from ..transcript import TranscriptView
from ._index import openhands as scoring
from ._index.openhands import _events_of, _is_event
from .base import Adapter, AdapterEvent, Detection
from .registry import register

FINISH_ACTIONS = ("finish",)


@register
class OpenHandsAdapter(Adapter):
    name = "openhands-events"
    label = "OpenHands event stream"
    where = (
        "OpenHands saves each conversation's events as a JSON list: the trajectory file "
        "written with `--save-trajectory-path` (or `save_trajectory_path` in config.toml), "
        "the events under ~/.openhands/sessions/<id>/events/, or "
        "GET /api/conversations/<id>/events."
    )
    markers = ("id", "timestamp", "source", "action", "observation", "tool_call_metadata")
    normalize = staticmethod(openai_chat.normalize_message)

    def __init__(self, source_name: str = "", shared: dict[str, Any] | None = None) -> None:
        super().__init__(source_name, shared)
        self._messages: list[Any] = []
        self._responses: set[str] = set()
        self._actions: dict[Any, tuple[str, str | None, float | None]] = {}
        self._agent_states: list[str] = []
        self._last_time: float | None = None
        self._model: str | None = None
        # the latest agent text message, while nothing followed it: (line, event, start,
        # end, its place in the transcript)
        self._final: tuple[int, dict[str, Any], float | None, float | None, int] | None = None

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        events = _events_of(record.value)
        if events is None:
            yield LineError(record.line, "not an OpenHands event (no action/observation, source)")
            return
        single = len(events) == 1 and events[0] is record.value
        for position, event in enumerate(events, start=1):
            where = record.line if single else position
            if not _is_event(event):
                yield LineError(where, "event without action/observation and source; skipped")
                continue
            yield from self._event(where, event)

    # -- events -------------------------------------------------------------------------
    def close(self) -> Iterator[AdapterEvent]:
        if self._final is not None:
            yield self._final_exchange(*self._final)
            self._final = None

    def _event(self, line: int, event: dict[str, Any]) -> Iterator[AdapterEvent]:
        moment = to_epoch_seconds(event.get("timestamp"))
        if "action" in event or event.get("observation") != "agent_state_changed":
            self._final = None  # the run went on after that message
        if "action" in event:
            yield from self._action(line, event, moment)
        else:
            yield from self._observation(line, event, moment)
        if moment is not None:
            self._last_time = moment

    def _action(
        self, line: int, event: dict[str, Any], moment: float | None
    ) -> Iterator[AdapterEvent]:
        metadata = event.get("tool_call_metadata")
        action = event.get("action")
        if not isinstance(metadata, dict):
            if action == "message":
                role = "user" if event.get("source") == "user" else "assistant"
                if role == "assistant":
                    self._final = (line, event, self._last_time, moment, len(self._messages))
                self._messages.append({"role": role, "content": _message_text(event)})
            return
        tool_id = str_or_none(metadata.get("tool_call_id"))
        name = str_or_none(metadata.get("function_name")) or str_or_none(action)
        if tool_id is not None and isinstance(event.get("id"), (int, str)):
            self._actions[event["id"]] = (tool_id, name, moment)
        response = metadata.get("model_response")
        response_id = response.get("id") if isinstance(response, dict) else None
        if not isinstance(response, dict) or not isinstance(response_id, str):
            yield LineError(line, "tool_call_metadata without a model_response id; not a call")
            return
        if response_id in self._responses:
            return  # another action of a response already read (a parallel batch)
        self._responses.add(response_id)
        yield self._exchange(line, event, response, moment, action)

    def _exchange(
        self,
        line: int,
        event: dict[str, Any],
        response: dict[str, Any],
        moment: float | None,
        action: Any,
    ) -> Exchange:
        reply = openai_chat.read_response(response)
        extra: dict[str, Any] = {"response_id": response["id"], "event_id": event.get("id")}
        if self._agent_states:
            extra["agent_states"], self._agent_states = self._agent_states, []
        message = _choice_message(response)
        finishing = [
            b.tool_id for b in reply.message.tool_uses if b.name in FINISH_ACTIONS and b.tool_id
        ]
        if finishing:
            # `finish` ends the run: it is never answered, by design (see the rule).
            extra["terminal_tool_ids"] = finishing
        request = TranscriptView(self._messages, len(self._messages))
        self._messages.append(message)
        self._model = str_or_none(response.get("model")) or self._model
        return Exchange(
            line=line,
            messages=request,
            normalize=self.normalize,
            model=str_or_none(response.get("model")),
            response=reply.message,
            response_raw=response,
            stop_reason=reply.stop_reason,
            usage=litellm_usage(response.get("usage")),
            started_at=self._last_time,
            ended_at=moment,
            extra=extra,
            loop_key=f"openhands:{self.source_name}",
            loop_label="OpenHands agent",
        )

    def _final_exchange(
        self,
        line: int,
        event: dict[str, Any],
        started: float | None,
        moment: float | None,
        position: int,
    ) -> Exchange:
        """The agent's closing text message as the call that ended the run (see above)."""
        raw = self._messages[position]
        extra: dict[str, Any] = {"event_id": event.get("id"), "final_message": True}
        if self._agent_states:
            extra["agent_states"], self._agent_states = self._agent_states, []
        return Exchange(
            line=line,
            messages=TranscriptView(self._messages, position),
            normalize=self.normalize,
            model=self._model,
            response=self.normalize(raw),
            response_raw=raw,
            stop_reason="end_turn",
            started_at=started,
            ended_at=moment,
            extra=extra,
            loop_key=f"openhands:{self.source_name}",
            loop_label="OpenHands agent",
        )

    def _observation(
        self, line: int, event: dict[str, Any], moment: float | None
    ) -> Iterator[ToolTiming]:
        kind = event.get("observation")
        extras = dict_or_empty(event.get("extras"))
        if kind == "agent_state_changed":
            state = str_or_none(extras.get("agent_state"))
            if state:
                self._agent_states.append(state)
            return
        cause_id = event.get("cause")
        cause = self._actions.get(cause_id) if isinstance(cause_id, (int, str)) else None
        metadata = event.get("tool_call_metadata")
        tool_id = cause[0] if cause else None
        if tool_id is None and isinstance(metadata, dict):
            tool_id = str_or_none(metadata.get("tool_call_id"))
        if tool_id is None:
            return  # an observation no tool call caused (e.g. a user-triggered command)
        text = str(event.get("content") or event.get("message") or "")
        is_error = _is_error(kind, extras, event)
        result: dict[str, Any] = {"role": "tool", "tool_call_id": tool_id, "content": text}
        if is_error:
            result["is_error"] = True
        self._messages.append(result)
        yield ToolTiming(
            line,
            tool_id,
            name=cause[1] if cause else None,
            started_at=cause[2] if cause else None,
            ended_at=moment,
            is_error=is_error,
            result_text=text,
        )


def _message_text(event: dict[str, Any]) -> str:
    args = dict_or_empty(event.get("args"))
    content = args.get("content")
    return content if isinstance(content, str) else str(event.get("message") or "")


def _choice_message(response: dict[str, Any]) -> dict[str, Any]:
    choices = response.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return {"role": "assistant", "content": None}
    return {"role": "assistant", **{k: v for k, v in message.items() if k != "role"}}


def litellm_usage(raw: Any) -> Usage | None:
    """LiteLLM usage: Chat Completions fields, plus Anthropic's cache fields for Claude
    (shared with the message-list reader: mini-swe-agent keeps LiteLLM responses too)."""
    usage = openai_chat.usage_from(raw)
    if usage is None or not isinstance(raw, dict):
        return usage
    written = raw.get("cache_creation_input_tokens")
    if isinstance(written, int) and written > 0:
        # LiteLLM counts cache writes inside prompt_tokens for Anthropic models.
        uncached = max(0, usage.input_tokens - written)
        return type(usage)(
            input_tokens=uncached,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=written,
        )
    return usage


def _is_error(kind: Any, extras: dict[str, Any], event: dict[str, Any]) -> bool:
    if kind == "error":
        return True
    metadata = extras.get("metadata")
    code = metadata.get("exit_code") if isinstance(metadata, dict) else extras.get("exit_code")
    return isinstance(code, int) and not isinstance(code, bool) and code != 0
