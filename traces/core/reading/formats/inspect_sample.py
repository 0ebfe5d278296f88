"""Read one sample of an Inspect AI log: every `model` event is one call, placed in its loop.

Each sample is one conversation (loop key = sample id + epoch). A `model` event holds the
request Inspect sent (`input`, or `input_refs` ranges into the sample's `message_pool`),
the tools offered, the reply, its timing and, optionally, the raw provider exchange
(`call`). Model calls made inside a scorer span or step (a model-graded scorer) or inside
a tool call (an agent used as a tool) form their own loop; so does a call whose first
message differs from every conversation of its context (a side call such as a
self-critique). `tool` events give the real start and end of each tool call. Samples
without any model event (very old logs) are rebuilt from `sample.messages`.

What the log's header says about the run (`LogHeader`) is needed to read the usage of
its samples (whether `input_tokens` includes the cached tokens depends on the version).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from traces.core.records import dataclass, field

from ...coerce import dict_or_empty, str_or_none
from ...model import Exchange, LineError, Message, ToolTiming
from ..dialects import inspect_ai as inspect
from ..timeparse import to_epoch_seconds
from .base import AdapterEvent


@dataclass(slots=True)
class LogHeader:
    """What the log says about the whole run, needed to read its samples."""

    status: str | None = None
    task: str | None = None
    model: str | None = None
    inspect_version: tuple[int, ...] | None = None
    version_text: str | None = None
    error: str | None = None
    has_samples_flag: bool | None = None

    def read(self, log: dict[str, Any]) -> None:
        if isinstance(log.get("status"), str):
            self.status = log["status"]
        if isinstance(log.get("error"), dict):
            self.error = str(log["error"].get("message") or "")
        spec = log.get("eval")
        if not isinstance(spec, dict):
            return
        self.task = str_or_none(spec.get("task")) or self.task
        self.model = str_or_none(spec.get("model")) or self.model
        packages = dict_or_empty(spec.get("packages"))
        text = str_or_none(packages.get("inspect_ai"))
        if text:
            self.version_text = text
            self.inspect_version = version_tuple(text)
        config = dict_or_empty(spec.get("config"))
        if isinstance(config.get("log_samples"), bool):
            self.has_samples_flag = config["log_samples"]


def version_tuple(text: str) -> tuple[int, ...] | None:
    """(0, 3, 95) from "0.3.95.dev16+g6527d0861"; None when it does not start with numbers."""
    numbers: list[int] = []
    for part in text.split("+")[0].split("."):
        if not part.isdigit():
            break
        numbers.append(int(part))
    return tuple(numbers) if numbers else None


@dataclass(slots=True)
class _Context:
    """Which conversation a model call belongs to: the sample's, a scorer's, a tool's."""

    key: str
    label: str
    parent_tool_id: str | None = None


@dataclass(slots=True)
class _Conversation:
    key: str
    label: str
    first: Any


@dataclass(slots=True)
class _Span:
    kind: str
    name: str
    parent: str | None


@dataclass(slots=True)
class SampleReader:
    """Walks one sample's events in order, yielding exchanges and tool timings."""

    header: LogHeader
    line: int
    sample: dict[str, Any]
    attachments: inspect.Attachments = field(init=False)
    pool: list[Any] = field(init=False)
    normalize: Callable[[Any], Message] = field(init=False)
    main: _Context = field(init=False)
    spans: dict[str, _Span] = field(default_factory=dict)
    steps: list[_Span] = field(default_factory=list)
    tool_spans: dict[str, tuple[str, str]] = field(default_factory=dict)
    open_tool_spans: list[tuple[str, str]] = field(default_factory=list)
    unbound_tools: list[tuple[str, str]] = field(default_factory=list)
    conversations: dict[str, list[_Conversation]] = field(default_factory=dict)
    bad_events: int = 0

    def __post_init__(self) -> None:
        attachments = self.sample.get("attachments")
        self.attachments = attachments if isinstance(attachments, dict) else {}
        pool = self.sample.get("message_pool")
        self.pool = pool if isinstance(pool, list) else []
        self.normalize = partial(inspect.normalize_message, attachments=self.attachments)
        sample_id, epoch = self.sample.get("id"), self.sample.get("epoch")
        epoch_text = f" (epoch {epoch})" if epoch is not None else ""
        self.main = _Context(f"sample {sample_id}#{epoch}", f"sample {sample_id}{epoch_text}")

    @property
    def where(self) -> str:
        return self.main.label

    def read(self) -> Iterator[AdapterEvent]:
        events = self.sample.get("events")
        if events is not None and not isinstance(events, list):
            yield LineError(self.line, f"{self.where}: 'events' is not a list")
            events = None
        if events:
            yield from self._events(events, None)
        if self.bad_events:
            yield LineError(
                self.line, f"{self.where}: {self.bad_events} events are not JSON objects"
            )
        if not events:
            yield from self._from_messages()

    # -- event walk ------------------------------------------------------------------------
    def _events(self, events: list[Any], forced: _Context | None) -> Iterator[AdapterEvent]:
        for event in events:
            if not isinstance(event, dict):
                self.bad_events += 1
                continue
            kind = event.get("event")
            if kind == "model":
                yield self._exchange(event, forced or self._context_of(event))
            elif kind == "tool":
                yield from self._tool(event, forced)
            elif kind == "span_begin":
                self._span_begin(event)
            elif kind == "step":
                self._step(event)
            elif kind == "subtask" and isinstance(event.get("events"), list):
                name = str_or_none(event.get("name")) or "subtask"
                context = _Context(
                    f"{self.main.key}/subtask {name}", f"{self.main.label} · subtask {name}"
                )
                yield from self._events(event["events"], context)

    def _span_begin(self, event: dict[str, Any]) -> None:
        span_id = str_or_none(event.get("id"))
        if span_id is None:
            return
        kind = str(event.get("type") or "")
        name = str(event.get("name") or "")
        self.spans[span_id] = _Span(kind, name, str_or_none(event.get("parent_id")))
        if kind != "tool":
            return
        tool = _take_named(self.unbound_tools, name)
        if tool is not None:
            self.tool_spans[span_id] = tool
        else:
            self.open_tool_spans.append((span_id, name))

    def _step(self, event: dict[str, Any]) -> None:
        """Older logs (before spans) mark solvers and scorers with step begin/end."""
        span = _Span(str(event.get("type") or ""), str(event.get("name") or ""), None)
        if event.get("action") == "begin":
            self.steps.append(span)
        elif event.get("action") == "end":
            for index in range(len(self.steps) - 1, -1, -1):
                if self.steps[index].name == span.name:
                    del self.steps[index:]
                    break

    def _tool(self, event: dict[str, Any], forced: _Context | None) -> Iterator[AdapterEvent]:
        tool_id = str_or_none(event.get("id"))
        name = str_or_none(event.get("function"))
        if tool_id is not None:
            self._bind_tool_span(event, tool_id, name or "")
            yield ToolTiming(
                line=self.line,
                tool_id=tool_id,
                name=name,
                started_at=to_epoch_seconds(event.get("timestamp")),
                ended_at=to_epoch_seconds(event.get("completed")),
                is_error=event.get("error") is not None,
            )
        nested = event.get("events")
        if isinstance(nested, list) and nested:
            # Older logs nest what a tool did (e.g. an agent used as a tool) in the event.
            context = forced or self._tool_context(tool_id or "?", name or "tool")
            yield from self._events(nested, context)

    def _bind_tool_span(self, event: dict[str, Any], tool_id: str, name: str) -> None:
        """Remember which span runs this tool call, to place model calls made inside it."""
        agent_span = str_or_none(event.get("agent_span_id"))
        if agent_span:
            self.tool_spans[agent_span] = (tool_id, name)
        span = _take_named(self.open_tool_spans, name)
        if span is not None:
            self.tool_spans[span[0]] = (tool_id, name)
        else:
            self.unbound_tools.append((tool_id, name))

    def _context_of(self, event: dict[str, Any]) -> _Context:
        """The innermost scorer or tool span (or step) around a model event."""
        span_id = str_or_none(event.get("span_id"))
        seen: set[str] = set()
        while span_id is not None and span_id not in seen:
            seen.add(span_id)
            if span_id in self.tool_spans:
                tool_id, name = self.tool_spans[span_id]
                return self._tool_context(tool_id, name)
            span = self.spans.get(span_id)
            if span is None:
                break
            if span.kind == "scorer":
                return self._scorer_context(span.name)
            span_id = span.parent
        for step in reversed(self.steps):
            if step.kind == "scorer":
                return self._scorer_context(step.name)
        return self.main

    def _scorer_context(self, name: str) -> _Context:
        return _Context(f"{self.main.key}/scorer {name}", f"{self.main.label} · scorer {name}")

    def _tool_context(self, tool_id: str, name: str) -> _Context:
        return _Context(
            f"{self.main.key}/tool {tool_id}",
            f"{self.main.label} · {name} ({tool_id})",
            parent_tool_id=tool_id,
        )

    def _conversation(self, context: _Context, messages: list[Any]) -> _Conversation:
        """The context's conversation this request continues (same first message)."""
        known = self.conversations.setdefault(context.key, [])
        first = messages[0] if messages else None
        for conversation in reversed(known):
            if conversation.first is None:
                conversation.first = first  # a call without input claims no conversation
                return conversation
            if first is None or conversation.first == first:
                return conversation
        if not known:
            conversation = _Conversation(context.key, context.label, first)
        else:
            number = len(known) + 1
            conversation = _Conversation(
                f"{context.key} #{number}", f"{context.label} (conversation {number})", first
            )
        known.append(conversation)
        return conversation

    # -- one model call --------------------------------------------------------------------
    def _exchange(self, event: dict[str, Any], context: _Context) -> Exchange | LineError:
        messages = self._input(event)
        if isinstance(messages, str):
            return LineError(self.line, f"{self.where}: a model event {messages}")
        conversation = self._conversation(context, messages)
        output = dict_or_empty(event.get("output"))
        choice = _first_choice(output)
        reply = choice.get("message") if isinstance(choice.get("message"), dict) else None
        response = self.normalize({**reply, "role": "assistant"}) if reply else None
        model = str_or_none(output.get("model")) or str_or_none(event.get("model"))
        usage, rule = inspect.inspect_usage(
            output.get("usage"),
            event.get("call"),
            self.header.inspect_version,
            model or self.header.model,
        )
        error = _error_text(event.get("error"))
        started = to_epoch_seconds(event.get("timestamp"))
        return Exchange(
            line=self.line,
            messages=messages,
            normalize=self.normalize,
            system=self._system(messages),
            tools=self._tools(event.get("tools")),
            model=model,
            response=response,
            response_raw=reply if reply is not None else (output or None),
            stop_reason=inspect.stop_reason(choice.get("stop_reason"), response),
            usage=usage,
            started_at=started,
            ended_at=_ended(event, output, started),
            status="error" if error else "ok",
            error=error,
            extra=self._extra(event, output, choice, rule),
            loop_key=conversation.key,
            loop_label=conversation.label,
            parent_tool_id=context.parent_tool_id,
        )

    def _input(self, event: dict[str, Any]) -> list[Any] | str:
        """The request's messages, taken from the message pool when the log condensed them."""
        messages = event.get("input")
        refs = event.get("input_refs")
        if not messages and isinstance(refs, list):
            return _expand_refs(refs, self.pool)
        if messages is None:
            return []
        if not isinstance(messages, list):
            return "has an 'input' that is not a list"
        return messages

    def _system(self, messages: list[Any]) -> Any:
        """The leading system messages' text (later ones stay in the transcript); only the
        head is read, so a long conversation costs nothing here."""
        texts: list[str] = []
        for message in messages:
            if not isinstance(message, dict) or message.get("role") != "system":
                break
            texts.append(inspect.content_text(message.get("content"), self.attachments))
        if not texts:
            return None
        return texts[0] if len(texts) == 1 else texts

    def _tools(self, tools: Any) -> list[Any]:
        if not isinstance(tools, list):
            return []
        return [inspect.resolve_deep(tool, self.attachments) for tool in tools]

    def _extra(
        self, event: dict[str, Any], output: dict[str, Any], choice: dict[str, Any], rule: str
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {
            "sample_id": self.sample.get("id"),
            "epoch": self.sample.get("epoch"),
            "inspect_stop_reason": choice.get("stop_reason"),
            "usage_rule": rule or None,
            "log_status": self.header.status,
            "log_error": self.header.error or None,
            "task": self.header.task,
            "inspect_version": self.header.version_text,
            "model_role": event.get("role"),
            "tool_choice": event.get("tool_choice"),
            "config": event.get("config") or None,
            "cache": event.get("cache"),
            "retries": event.get("retries"),
            "pending": event.get("pending"),
            "working_time": event.get("working_time"),
            "output_error": output.get("error"),
            "raw_call_recorded": isinstance(event.get("call"), dict) or None,
            "sample_error": _error_text(self.sample.get("error")),
            "sample_limit": self.sample.get("limit"),
        }
        return {key: value for key, value in extra.items() if value is not None}

    # -- samples without model events ------------------------------------------------------
    def _from_messages(self) -> Iterator[AdapterEvent]:
        """One implied call per assistant message; its request is every message before it."""
        messages = self.sample.get("messages")
        if not isinstance(messages, list):
            return
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            response = self.normalize(message)
            yield Exchange(
                line=self.line,
                messages=messages[:index],
                normalize=self.normalize,
                system=self._system(messages[:index]),
                model=str_or_none(message.get("model")) or self.header.model,
                response=response,
                response_raw=message,
                stop_reason="tool_use" if response.tool_uses else "end_turn",
                extra={"sample_id": self.sample.get("id"), "rebuilt_from": "sample messages"},
                loop_key=self.main.key,
                loop_label=self.main.label,
                tokens_estimated=True,
            )


def _take_named(pending: list[tuple[str, str]], name: str) -> tuple[str, str] | None:
    """Remove and return the oldest (id, name) waiting with this name: a tool span and its
    tool event are written next to each other, in either order, even for parallel calls."""
    for index, item in enumerate(pending):
        if item[1] == name:
            return pending.pop(index)
    return None


def _expand_refs(refs: list[Any], pool: list[Any]) -> list[Any] | str:
    """`[[start, end_exclusive], ...]` ranges into the pool, as the same message objects."""
    messages: list[Any] = []
    for ref in refs:
        if not (isinstance(ref, list) and len(ref) == 2 and all(isinstance(i, int) for i in ref)):
            return "has an 'input_refs' entry that is not a [start, end] pair"
        start, end = ref
        if not 0 <= start <= end <= len(pool):
            return f"refers to messages {start}..{end} outside the sample's message pool"
        messages.extend(pool[start:end])
    return messages


def _first_choice(output: dict[str, Any]) -> dict[str, Any]:
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return {}


def _ended(event: dict[str, Any], output: dict[str, Any], started: float | None) -> float | None:
    ended = to_epoch_seconds(event.get("completed"))
    if ended is None and started is not None:
        elapsed = output.get("time")
        if isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool):
            ended = started + float(elapsed)
    return ended


def _error_text(error: Any) -> str | None:
    if error is None or error == "":
        return None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or error)
    return str(error)
