"""The report's shape (`loop-inspector/report/v1`) as types: what `build_report` returns
and the only shape the web reads.

Declared once so a checker can follow a key from the core to a presenter; the wire format
is unchanged (docs/report-schema.md says what each key means). Keys that only some
traces have are `NotRequired`; a value the trace does not know is `None`.
"""

from typing import Any, Literal, NotRequired, TypedDict

from .model import CallStatus, Pairing, ToolRunStatus

Severity = Literal["error", "warning", "info"]


class OutcomeEntry(TypedDict):
    """How the main loop ended, in one sentence, and where."""

    kind: str
    text: str
    loop: int | None
    call: int | None


class LineErrorEntry(TypedDict):
    line: int
    message: str


class LinesEntry(TypedDict):
    """How much of the file was read, and what could not be."""

    total: int
    ingested: int
    errors: list[LineErrorEntry]


class LoopEntry(TypedDict):
    index: int
    calls: list[int]
    model: str | None
    label: str | None
    parent_tool_id: str | None


class BucketsEntry(TypedDict):
    """Where input tokens went: the re-sent prefix, tool results, replayed output, rest."""

    prefix: int
    tool_results: int
    replayed_output: int
    other: int


class CompactionEntry(TypedDict):
    source: str
    line: int | None
    trigger: str | None
    pre_tokens: int | None


class CallFacts(TypedDict):
    """What one model call recorded: its report entry before the accounting. One shape for
    the report and the live event, which sends it at once (the report, with the
    accounting, follows). `input_tokens` is the *uncached* input (Anthropic's
    convention): the call's whole input is `input_tokens + cache_read_tokens +
    cache_write_tokens`; `None` when the call reported no usage."""

    index: int
    loop: int
    line: int
    model: str | None
    stop_reason: str | None
    status: CallStatus
    error: str | None
    http_status: int | None
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    tool_call_ids: list[str]
    started_at: float | None
    duration_s: float | None
    messages: int
    appended: int
    extends_previous: bool
    history_rewritten: bool
    hook_events: NotRequired[list[dict[str, Any]]]
    session_result: NotRequired[dict[str, Any]]
    call_outcome: NotRequired[str]
    compaction: NotRequired[CompactionEntry]
    attempted_tool_calls: NotRequired[list[dict[str, Any]]]


class CallEntry(CallFacts):
    """One model call in the report: its facts, then their accounting."""

    buckets: BucketsEntry
    tokens_exact: bool
    estimate_residual: int
    cost_usd: float | None
    cost_uncached_usd: float | None
    cost_prefix_cached_usd: float | None
    priced_as: str | None


class ToolRunFacts(TypedDict):
    """One tool run as recorded: who asked, which request carried the result, how it was
    paired and where it ran. The report's entry before the accounting, and what a live
    event sends (the report adds what the result cost to resend)."""

    id: str
    name: str | None
    call: int | None
    result_call: int | None
    status: ToolRunStatus
    is_error: bool
    batch_size: int
    loop: int
    started_at: float | None
    ended_at: float | None
    duration_s: float | None
    result_preview: str
    pairing: NotRequired[Pairing]
    transport: NotRequired[dict[str, Any]]
    error_inferred: NotRequired[str]


class ToolRunEntry(ToolRunFacts):
    """One tool run in the report: its facts, and what its result cost to resend."""

    result_tokens: int | None
    requests_carrying: int
    resend_tokens: int
    result_tokens_exact: NotRequired[bool]


class ParallelBatchEntry(TypedDict):
    call: int
    tool_call_ids: list[str]


class CostTotals(TypedDict):
    """The trace's cost as billed, with no cache, and with the prefix cached."""

    actual: float | None
    uncached: float | None
    prefix_cached: float | None


class TotalsEntry(TypedDict):
    """Sums over the trace; token sums cover the calls that reported usage."""

    calls: int
    failed_calls: int
    loops: int
    tool_runs: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    buckets: BucketsEntry
    cost_usd: CostTotals


class AccountingEntry(TypedDict):
    """How the figures were reached: the tokenizer, the estimated calls, the price table."""

    encoding: str
    estimated_calls: int
    prices_taken: str
    prices_source: str
    unpriced_models: list[str]


class FindingEntry(TypedDict):
    rule: str
    severity: Severity
    call: int | None
    tool_call_id: str | None
    loop: int | None
    message: str


class OtherTrafficEntry(TypedDict):
    """A recorded HTTP interaction that is not a model call (MCP, A2A, telemetry, auth)."""

    line: int
    kind: str
    method: str | None
    url: str
    status: int | None
    summary: str
    rpc_method: str | None
    rpc_id: Any
    session: int | None
    tool_name: str | None
    is_error: bool | None


class WhatIfInputs(TypedDict):
    """What the web needs to recompute the scenarios that only the trace holds."""

    prices: dict[str, dict[str, float | None]]
    unused_tools: list[dict[str, Any]]
    placeholder_tokens: int
    oversized_threshold: int


class WhatIfEntry(TypedDict):
    """What each fix would have saved (scenarios are documented in docs/report-schema.md)."""

    parameters: dict[str, Any]
    scenarios: list[dict[str, Any]]
    top_savings: list[dict[str, Any]]
    inputs: WhatIfInputs


class ScoreEntry(TypedDict):
    """What an eval's scorer said of one sample (Inspect AI): its value as text."""

    sample: str
    scorer: str
    value: str
    answer: str
    explanation: str


class Report(TypedDict):
    """The whole report, `loop-inspector/report/v1`."""

    schema: str
    format: str
    detection: str
    outcome: OutcomeEntry
    lines: LinesEntry
    loops: list[LoopEntry]
    calls: list[CallEntry]
    tool_runs: list[ToolRunEntry]
    parallel_batches: list[ParallelBatchEntry]
    totals: TotalsEntry
    accounting: AccountingEntry
    findings: list[FindingEntry]
    notes: NotRequired[list[str]]
    mapping: NotRequired[dict[str, Any]]
    other_traffic: NotRequired[list[OtherTrafficEntry]]
    scores: NotRequired[list[ScoreEntry]]
    what_if: WhatIfEntry


class CallRowMarks(TypedDict):
    """What a call's row in the trace page's call table shows beyond the call's facts:
    the tools it asked for, its cost, the estimated input of a call that reported no
    usage, and its findings. Computed in one place (traces.core.outputs.call_row) for the
    page's first paint and for the live event, so the two rows say the same."""

    tool_names: list[str]
    cost_usd: float | None
    estimated_input: int | None
    findings: list[FindingEntry]


class LiveCallEntry(CallFacts, CallRowMarks):
    """A call as a live event sends it, at once: its facts (the same keys and values as
    its entry in the report that follows), its row's marks as far as they are known
    before that report (the cost from the call's own usage; no estimate, no finding),
    and what the page needs to place the row."""

    base_call: int | None
    url: str


class LiveCallAccountEntry(TypedDict):
    """A call's row marks from the first report that covers the call (a live event sent
    once per call): what the live event could not know yet, so the row then reads as the
    page's first paint would."""

    index: int
    cost_usd: float | None
    estimated_input: int | None


class LiveToolRunEntry(ToolRunFacts):
    """A new or changed tool run as a live event sends it: its facts and its position
    (1-based) in the trace's tool runs."""

    position: int


class LiveFindingEntry(FindingEntry):
    """A finding as a live event sends it: one the new report added, or one it no longer
    has (`resolved`)."""

    resolved: NotRequired[bool]


class StoredReport(TypedDict, total=False):
    """A report as a stored trace holds it: `{}` until a live trace's first report, and a
    report written by an earlier v1 lacks the keys added since, so every key may be
    missing; the web reads it through this type (`.get` with a default)."""

    schema: str
    format: str
    detection: str
    outcome: OutcomeEntry
    lines: LinesEntry
    loops: list[LoopEntry]
    calls: list[CallEntry]
    tool_runs: list[ToolRunEntry]
    parallel_batches: list[ParallelBatchEntry]
    totals: TotalsEntry
    accounting: AccountingEntry
    findings: list[FindingEntry]
    notes: list[str]
    mapping: dict[str, Any]
    other_traffic: list[OtherTrafficEntry]
    scores: list[ScoreEntry]
    what_if: WhatIfEntry
