"""Canonical domain model: every trace format is translated into these frozen records.

Adapters produce `Exchange`s (one observed model round trip, in the provider's own
message shapes plus a normaliser); `rebuild` turns them into `Call`s, `ToolRun`s and
`ParallelBatch`es grouped into `Loop`s, collected in a `Trace`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from traces.core.records import dataclass, field

JSON = Any
BlockKind = Literal[
    "text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "other"
]
CallStatus = Literal["ok", "error"]
ToolRunStatus = Literal["paired", "pending", "dangling", "orphan"]
Pairing = Literal["id", "name-order", "name-input", "text"]
"""How a tool result was matched to its call: by the call id the format records ("id"),
or, for formats that record none, by tool name and order within a turn ("name-order"),
by tool name and arguments ("name-input", e.g. a tracing span with no call id), or by
position in text the model wrote ("text", ReAct-style "Function Name:" blocks)."""


@dataclass(frozen=True, slots=True)
class LineError:
    """A line (or record) that could not be read; the rest of the file is still ingested."""

    line: int
    message: str


@dataclass(frozen=True, slots=True)
class Block:
    """One content block of a message, in a provider-neutral shape."""

    kind: BlockKind
    text: str = ""
    tool_id: str | None = None
    name: str | None = None
    input: JSON = None
    is_error: bool = False
    raw: JSON = None


@dataclass(frozen=True, slots=True)
class Message:
    """One transcript message: a role and its blocks."""

    role: str
    blocks: tuple[Block, ...]

    # A list comprehension, not a generator: these run for every message of every rule,
    # and a generator costs twice as much on messages of a few blocks.
    @property
    def tool_uses(self) -> tuple[Block, ...]:
        return tuple([b for b in self.blocks if b.kind == "tool_use"])

    @property
    def tool_results(self) -> tuple[Block, ...]:
        return tuple([b for b in self.blocks if b.kind == "tool_result"])


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage as the provider reported it, normalised.

    `input_tokens` is always the *uncached* input (Anthropic's convention); adapters for
    providers whose input includes cached tokens subtract them.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_5m_tokens: int | None = None
    cache_write_1h_tokens: int | None = None

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True, slots=True)
class Exchange:
    """One observed model round trip, as an adapter read it.

    `messages`, `system` and `tools` keep the provider's own JSON so that repeated
    transcripts can be compared cheaply and stored content-addressed; `normalize` turns
    one raw message into a `Message` (only new messages are ever normalised).
    """

    line: int
    messages: Sequence[JSON]
    normalize: Callable[[JSON], Message]
    system: JSON = None
    tools: Sequence[JSON] = ()
    model: str | None = None
    response: Message | None = None
    response_raw: JSON = None
    stop_reason: str | None = None
    usage: Usage | None = None
    started_at: float | None = None
    ended_at: float | None = None
    status: CallStatus = "ok"
    http_status: int | None = None
    error: str | None = None
    request_recorded: bool = True
    extra: Mapping[str, JSON] = field(default_factory=dict)
    loop_key: str | None = None
    """Set by formats that know the conversation (a session, subagent or sample id):
    exchanges with the same key form one loop, whatever their messages."""
    loop_label: str | None = None
    """A human name for that loop, e.g. "subagent a485154" or "sample 3"."""
    parent_tool_id: str | None = None
    """The tool call that spawned this loop (a Task/Agent subagent), when known."""
    tokens_estimated: bool = False
    """True when the format records no usage for this call (message-list transcripts)."""
    tool_pairing: Pairing | Mapping[str, Pairing] = field(default_factory=dict)
    """How the results of tool ids the adapter made up (the format records none) were
    matched: one method for the whole exchange (Gemini: by name and order within the turn),
    or a method per made-up id (Langfuse: some by name and arguments, some by order)."""


@dataclass(frozen=True, slots=True)
class ToolTiming:
    """When a tool really ran, for formats that log it (our own format, Codex exec events).

    Applied to the ToolRun with the same id; a timing for an unknown id is kept until
    that id appears.
    """

    line: int
    tool_id: str
    name: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    is_error: bool | None = None
    result_text: str | None = None
    """The result as the tool log recorded it, for results no later request carried
    (a loop that ended right after a final tool, such as a `submit`)."""
    pairing: Pairing = "id"
    """How this log entry was matched to the tool call (see `Pairing`)."""

    input: JSON = None
    """The arguments, when the tool log records them (an OTel `execute_tool` span)."""


@dataclass(frozen=True, slots=True)
class HttpTraffic:
    """A recorded HTTP interaction that is not a model call: an MCP JSON-RPC post, an SDK
    exporting its own telemetry, a token request. Kept and shown, never counted as a model
    call or an API error.

    An MCP `tools/call` also names the tool it ran (`tool_name`, `tool_input`) and its
    result, so the builder can place it under the model call that asked for it.
    """

    line: int
    kind: str
    """`mcp`, `a2a` (Agent2Agent calls to other agents), `telemetry`, `auth` or `other`."""
    method: str | None
    url: str
    status: int | None
    summary: str
    rpc_method: str | None = None
    rpc_id: JSON = None
    session: int | None = None
    """The MCP session's ordinal in the file (JSON-RPC ids restart in each session)."""
    tool_name: str | None = None
    tool_input: JSON = None
    result_text: str | None = None
    is_error: bool | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """One billed model round trip, placed in its loop.

    The request is stored as a delta: `prefix_len` messages are shared with call
    `base_call` of the same loop and `appended` holds the rest, so a long loop costs
    linear, not quadratic, memory.
    """

    index: int
    loop: int
    line: int
    model: str | None
    system: JSON
    tools: Sequence[JSON]
    appended: tuple[Message, ...]
    appended_raw: tuple[JSON, ...]
    prefix_len: int
    base_call: int | None
    extends_previous: bool
    history_rewritten: bool
    response: Message | None
    response_raw: JSON
    stop_reason: str | None
    usage: Usage | None
    started_at: float | None
    ended_at: float | None
    status: CallStatus
    http_status: int | None
    error: str | None
    request_recorded: bool
    message_count: int
    tool_call_ids: tuple[str, ...]
    extra: Mapping[str, JSON]
    tokens_estimated: bool = False

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0.0, self.ended_at - self.started_at)


@dataclass(frozen=True, slots=True)
class ToolRun:
    """A tool call paired with its result by id.

    `call` asked for it (None when the request history already held it); `result_call`
    is the first request that carried its result.
    """

    id: str
    name: str | None
    loop: int
    call: int | None
    result_call: int | None
    status: ToolRunStatus
    is_error: bool
    batch_size: int
    input: JSON = None
    result_text: str = ""
    started_at: float | None = None
    ended_at: float | None = None
    pairing: Pairing = "id"
    """How the result was matched to the call (see `Pairing`)."""
    transport: Mapping[str, JSON] | None = None
    """Where the tool really ran, when the file recorded it: an MCP `tools/call`
    (`{"kind": "mcp", "traffic": n, "session": s, "rpc_id": i, "is_error": b}`)."""
    error_inferred: str | None = None
    """Why the result reads as a failure though nothing flagged it (see
    `inferred_errors`); always None when `is_error` is set: flagged errors stay apart."""

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0.0, self.ended_at - self.started_at)


@dataclass(frozen=True, slots=True)
class IdCollision:
    """One tool call id used for two different calls in one loop (pairing fell back on
    the most recent call with that id)."""

    tool_id: str
    loop: int
    first_call: int | None
    second_call: int | None


@dataclass(frozen=True, slots=True)
class ParallelBatch:
    """Several tool calls issued in one response."""

    call: int
    tool_call_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Loop:
    """One conversation: calls whose requests extend one another."""

    index: int
    calls: tuple[int, ...]
    model: str | None
    key: str | None = None
    label: str | None = None
    parent_tool_id: str | None = None


@dataclass(frozen=True, slots=True)
class Score:
    """How an eval scored one sample (Inspect AI's `sample.scores`): the scorer's name, its
    value as text ("C", "0.75", "accuracy: 1"), and the answer and explanation it gave."""

    sample: str
    scorer: str
    value: str
    answer: str = ""
    explanation: str = ""


@dataclass(frozen=True, slots=True)
class Trace:
    """Everything rebuilt from one file."""

    format: str
    calls: tuple[Call, ...]
    tool_runs: tuple[ToolRun, ...]
    batches: tuple[ParallelBatch, ...]
    loops: tuple[Loop, ...]
    line_errors: tuple[LineError, ...]
    lines_total: int
    records_ingested: int
    detection_reason: str = ""
    id_collisions: tuple[IdCollision, ...] = ()
    other_traffic: tuple[HttpTraffic, ...] = ()
    """Recorded HTTP interactions that are not model calls, in file order."""
    notes: tuple[str, ...] = ()
    """What the reader should know about how the file was read (e.g. expressions of a
    mapping file that matched nothing)."""
    mapping: Mapping[str, JSON] | None = None
    """The mapping file the trace was read with (`{"name", "spec"}`), so that it can be
    read again the same way."""
    scores: tuple[Score, ...] = ()
    """What an eval's scorers said of the runs in the file (formats that score samples)."""
