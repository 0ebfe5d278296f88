"""ATIF trajectories (Agent Trajectory Interchange Format, Harbor / Terminal-Bench).

Schema: Harbor RFC 0001 "Agent Trajectory Interchange Format (ATIF) Specification"
(laude-institute/harbor, docs/rfcs/0001-trajectory-format.md, v1.4, October 2025) and
Harbor's Pydantic models (`harbor.models.trajectories`), which add `agent.tool_definitions`
(v1.5) and multimodal content, a list of `{type: "text", text}` / `{type: "image",
source: {media_type, path}}` parts, in messages and observation results (v1.6). A
trajectory is one JSON object:

    {schema_version: "ATIF-v1.x", session_id, agent: {name, version, model_name?},
     steps: [{step_id, timestamp?, source: "system"|"user"|"agent", model_name?,
              message, reasoning_content?, tool_calls?: [{tool_call_id, function_name,
              arguments}], observation?: {results: [{source_call_id?, content?,
              subagent_trajectory_ref?: [{session_id, trajectory_path?}]}]},
              metrics?: {prompt_tokens, completion_tokens, cached_tokens, cost_usd,
              extra?}}],
     final_metrics?, notes?, extra?}

A file holds one trajectory (a JSON document), several (a JSON array) or one per line
(JSONL); embedded `subagent_trajectories` (written by some v1.7 exporters) are read too.

The format logs steps, not requests, so the calls are rebuilt: each agent step is one
LLM call whose request is every step before it, where an earlier agent step contributes
its reply and then, as a separate message, its observation (the results of the tool
calls it made). Results pair with calls by `source_call_id` exactly as written; a result
without one (allowed for actions outside tool calling) stays unpaired text. ATIF records
no stop reason: a step with tool calls stopped for tools, any other for the end of its
turn (`extra["stop_reason_inferred"]`).

Usage, per the RFC's MetricsSchema: `prompt_tokens` is the whole prompt, cached tokens
included; `cached_tokens` is the subset read from cache; cache writes, when an exporter
records them, sit in `metrics.extra.cache_creation_input_tokens`. So uncached input =
prompt - cached - cache writes. A step without metrics has no usage and is marked
`tokens_estimated`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...coerce import dict_or_empty, non_negative, str_or_none
from ...model import Block, Exchange, LineError, Message, Usage
from ..records import Record
from ..timeparse import to_epoch_seconds
from ._index import atif as scoring
from ._index.atif import STEP_SOURCES
from .base import Adapter, AdapterEvent, Detection
from .registry import register

ROLES = {"system": "system", "user": "user", "agent": "assistant"}
OBSERVATION = "observation"


@register
class AtifAdapter(Adapter):
    name = "atif"
    label = "ATIF agent trajectory (Harbor)"
    where = (
        "Written by Harbor and Terminal-Bench agents as `agent/trajectory.json` in each "
        "trial's folder, and by other tools that export ATIF (one trajectory per file, "
        "or one per line)."
    )

    @staticmethod
    def normalize(raw: Any) -> Message:
        return normalize_step(raw)

    @classmethod
    def sniff(cls, values: Sequence[Any]) -> Detection | None:
        return scoring.sniff(values)

    def feed(self, record: Record) -> Iterator[AdapterEvent]:
        value = record.value
        if not isinstance(value, dict):
            yield LineError(record.line, "expected an ATIF trajectory object")
            return
        yield from errors_first(_Trajectory(record.line, value, None, None).read())


def errors_first(events: Iterator[AdapterEvent]) -> Iterator[AdapterEvent]:
    """A record's LineErrors before its calls, so a bad step does not discount the record
    (the session counts a record as ingested when its last event is not an error)."""
    held = list(events)
    yield from (event for event in held if isinstance(event, LineError))
    yield from (event for event in held if not isinstance(event, LineError))


class _Trajectory:
    """One trajectory (and the subagent trajectories embedded in it) as exchanges."""

    def __init__(
        self, line: int, value: dict[str, Any], parent_tool_id: str | None, parent: str | None
    ) -> None:
        self.line = line
        self.value = value
        agent = dict_or_empty(value.get("agent"))
        self.agent = agent
        self.session = str_or_none(value.get("session_id")) or f"line {line}"
        name = str_or_none(agent.get("name")) or "agent"
        self.key = f"atif {self.session}"
        self.label = f"{name} {self.session}" if parent is None else f"{parent} > {name}"
        self.parent_tool_id = parent_tool_id
        tools = agent.get("tool_definitions")
        self.tools = tools if isinstance(tools, list) else []
        self.subagent_calls: dict[str, str] = {}

    def read(self) -> Iterator[AdapterEvent]:
        steps = self.value.get("steps")
        if not isinstance(steps, list):
            yield LineError(self.line, f"trajectory {self.session}: 'steps' is not a list")
            return
        transcript: list[Any] = []
        calls = 0
        for position, step in enumerate(steps, start=1):
            if not isinstance(step, dict):
                yield LineError(
                    self.line, f"trajectory {self.session}: step #{position} is not an object"
                )
                continue
            source = step.get("source")
            if source not in STEP_SOURCES:
                yield LineError(
                    self.line,
                    f"trajectory {self.session}: step {step.get('step_id', position)} has "
                    f"source {source!r}, not system, user or agent",
                )
                continue
            if source == "agent":
                calls += 1
                yield self._exchange(step, transcript[:])
            transcript.append(step)
            observation = _observation_message(step)
            if observation is not None:
                transcript.append(observation)
        if calls == 0:
            yield LineError(
                self.line, f"trajectory {self.session}: no agent step, so no model call to show"
            )
        yield from self._subagents()

    def _exchange(self, step: dict[str, Any], messages: list[Any]) -> Exchange:
        response = normalize_step(step)
        metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else None
        usage = usage_from(metrics)
        started = to_epoch_seconds(step.get("timestamp"))
        self._remember_subagents(step)
        return Exchange(
            line=self.line,
            messages=messages,
            normalize=normalize_step,
            system=_system(messages),
            tools=self.tools,
            model=str_or_none(step.get("model_name")) or str_or_none(self.agent.get("model_name")),
            response=response,
            response_raw=step,
            stop_reason="tool_use" if response.tool_uses else "end_turn",
            usage=usage,
            started_at=started,
            ended_at=_ended(started, metrics),
            extra=self._extra(step, metrics),
            loop_key=self.key,
            loop_label=self.label,
            parent_tool_id=self.parent_tool_id,
            tokens_estimated=usage is None,
        )

    def _extra(self, step: dict[str, Any], metrics: dict[str, Any] | None) -> dict[str, Any]:
        results = _results(step)
        unlinked = sum(1 for r in results if isinstance(r, dict) and not r.get("source_call_id"))
        extra: dict[str, Any] = {
            "step_id": step.get("step_id"),
            "session_id": self.session,
            "schema_version": self.value.get("schema_version"),
            "agent": self.agent.get("name"),
            "agent_version": self.agent.get("version"),
            "stop_reason_inferred": True,
            "reasoning_effort": step.get("reasoning_effort"),
            "cost_usd": metrics.get("cost_usd") if metrics else None,
            "metrics_extra": metrics.get("extra") if metrics else None,
            "unlinked_results": unlinked or None,
            "step_extra": step.get("extra"),
        }
        return {key: value for key, value in extra.items() if value is not None}

    def _remember_subagents(self, step: dict[str, Any]) -> None:
        """Which tool call delegated to which subagent session, to link embedded ones."""
        for result in _results(step):
            if not isinstance(result, dict) or not isinstance(result.get("source_call_id"), str):
                continue
            refs = result.get("subagent_trajectory_ref")
            for ref in refs if isinstance(refs, list) else []:
                if isinstance(ref, dict) and isinstance(ref.get("session_id"), str):
                    self.subagent_calls[ref["session_id"]] = result["source_call_id"]

    def _subagents(self) -> Iterator[AdapterEvent]:
        embedded = self.value.get("subagent_trajectories")
        if not isinstance(embedded, list):
            return
        for position, sub in enumerate(embedded, start=1):
            if not isinstance(sub, dict):
                yield LineError(
                    self.line, f"trajectory {self.session}: subagent #{position} is not an object"
                )
                continue
            parent_call = self.subagent_calls.get(str(sub.get("session_id")))
            yield from _Trajectory(self.line, sub, parent_call, self.label).read()


def _observation_message(step: dict[str, Any]) -> dict[str, Any] | None:
    """The results an agent (or system) step received, as the next message of the request."""
    observation = step.get("observation")
    if not isinstance(observation, dict) or not observation.get("results"):
        return None
    return {"source": OBSERVATION, "step_id": step.get("step_id"), "observation": observation}


def _results(step: dict[str, Any]) -> list[Any]:
    observation = step.get("observation")
    results = observation.get("results") if isinstance(observation, dict) else None
    return results if isinstance(results, list) else []


def _system(messages: list[Any]) -> Any:
    """The leading system steps' text; only the head of the transcript is read."""
    texts: list[str] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("source") != "system":
            break
        texts.append(content_text(message.get("message")))
    if not texts:
        return None
    return texts[0] if len(texts) == 1 else texts


def _ended(started: float | None, metrics: dict[str, Any] | None) -> float | None:
    duration = metrics.get("duration_ms") if metrics else None
    if started is None or not isinstance(duration, (int, float)) or isinstance(duration, bool):
        return None
    return started + duration / 1000


# -- usage -------------------------------------------------------------------------------
def usage_from(metrics: dict[str, Any] | None) -> Usage | None:
    """ATIF metrics: prompt_tokens includes cached_tokens (and recorded cache writes)."""
    if not metrics or not any(k in metrics for k in ("prompt_tokens", "completion_tokens")):
        return None
    extra = dict_or_empty(metrics.get("extra"))
    prompt = non_negative(metrics.get("prompt_tokens"))
    cached = min(non_negative(metrics.get("cached_tokens")), prompt)
    written = non_negative(
        extra.get("cache_creation_input_tokens", extra.get("cache_creation_tokens"))
    )
    written = min(written, prompt - cached)
    return Usage(
        input_tokens=prompt - cached - written,
        output_tokens=non_negative(metrics.get("completion_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


# -- messages ----------------------------------------------------------------------------
def normalize_step(raw: Any) -> Message:
    """A step (system, user or agent) or the observation message built from one."""
    if not isinstance(raw, dict):
        return Message("unknown", (Block("other", text=str(raw), raw=raw),))
    source = raw.get("source")
    if source == OBSERVATION:
        return Message("tool", tuple(_result_blocks(raw.get("observation"))))
    if source == "agent":
        return Message("assistant", tuple(_agent_blocks(raw)))
    role = ROLES.get(str(source), str(source or "unknown"))
    return Message(role, tuple(content_blocks(raw.get("message"))))


def _agent_blocks(step: dict[str, Any]) -> Iterator[Block]:
    reasoning = step.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        yield Block("thinking", text=reasoning, raw=reasoning)
    yield from content_blocks(step.get("message"))
    calls = step.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            yield Block("other", text=str(call), raw=call)
            continue
        yield Block(
            "tool_use",
            tool_id=str_or_none(call.get("tool_call_id")),
            name=str_or_none(call.get("function_name")),
            input=call.get("arguments"),
            raw=call,
        )


def _result_blocks(observation: Any) -> Iterator[Block]:
    results = observation.get("results") if isinstance(observation, dict) else None
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, dict):
            yield Block("other", text=str(result), raw=result)
            continue
        text = content_text(result.get("content"))
        refs = result.get("subagent_trajectory_ref")
        for ref in refs if isinstance(refs, list) else []:
            if isinstance(ref, dict):
                text = f"{text}\n[subagent trajectory {ref.get('session_id')}]".strip()
        call_id = result.get("source_call_id")
        if call_id is None:
            yield Block("text", text=text, raw=result)
        else:
            yield Block("tool_result", text=text, tool_id=str_or_none(call_id), raw=result)


def content_blocks(content: Any) -> Iterator[Block]:
    """A message: a string, or (v1.6) a list of text and image parts."""
    if isinstance(content, str):
        if content:
            yield Block("text", text=content, raw=content)
        return
    if not isinstance(content, list):
        return
    for part in content:
        if isinstance(part, str):
            yield Block("text", text=part, raw=part)
        elif isinstance(part, dict) and part.get("type") == "text":
            yield Block("text", text=str(part.get("text") or ""), raw=part)
        elif isinstance(part, dict) and part.get("type") == "image":
            source = dict_or_empty(part.get("source"))
            where = source.get("path") or source.get("url") or ""
            yield Block("image", text=f"[image {where}]".replace(" ]", "]"), raw=part)
        else:
            yield Block("other", text=str(part), raw=part)


def content_text(content: Any) -> str:
    return "\n".join(block.text for block in content_blocks(content) if block.text)
