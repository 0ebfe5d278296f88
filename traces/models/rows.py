"""Storage of what analysis derived from a trace: its calls, tool runs, findings, bad lines.

These rows are rebuilt from the original on every (re)analysis, so they hold nothing the
original does not. Split from `traces.models` (which re-exports every name, so
`models.Call` still reads as one storage module) to keep each module to one job: that one
holds the traces, their originals and live state; this one their derived rows. The
foreign keys name `traces.Trace` by string, so neither module imports the other's class.
"""

from __future__ import annotations

from django.db import models

from traces.core.analysis.inferred_errors import inferred_error
from traces.core.reading import blobs
from traces.fields import NulSafeCharField, NulSafeJSONField, NulSafeTextField


def seconds_between(started_at: float | None, ended_at: float | None) -> float | None:
    """How long a call or a whole trace took: None when either end is unknown, and never
    negative (a log's clock can step back)."""
    if started_at is None or ended_at is None:
        return None
    return max(0.0, ended_at - started_at)


class TraceRule(models.Model):
    """How many findings one rule raised in one trace: the list's rule filter and a set's
    findings by rule read these rows instead of the reports."""

    trace = models.ForeignKey("traces.Trace", on_delete=models.CASCADE, related_name="rule_counts")
    rule = models.CharField(max_length=60)
    severity = models.CharField(max_length=10)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["trace", "rule"]
        constraints = [
            models.UniqueConstraint("trace", "rule", "severity", name="unique_trace_rule")
        ]
        # With the trace last, the list's rule and severity filters read the traces that
        # fired from the index alone (an `id IN (…)`, issue 25).
        indexes = [
            models.Index(fields=["rule", "severity", "trace"], name="trace_rule_trace_idx"),
            models.Index(fields=["severity", "trace"], name="trace_severity_idx"),
        ]


class Call(models.Model):
    """One billed model round trip. Its request is a delta on `base_call` (see core.model)."""

    trace = models.ForeignKey("traces.Trace", on_delete=models.CASCADE, related_name="calls")
    index = models.PositiveIntegerField()
    loop = models.PositiveIntegerField()
    line = models.PositiveIntegerField()
    model = NulSafeCharField(max_length=200, blank=True)
    stop_reason = NulSafeCharField(max_length=60, blank=True)
    status = models.CharField(max_length=10)
    error = NulSafeTextField(blank=True)
    http_status = models.PositiveIntegerField(null=True)
    usage_reported = models.BooleanField(default=False)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    started_at = models.FloatField(null=True)
    ended_at = models.FloatField(null=True)
    base_call = models.PositiveIntegerField(null=True)
    prefix_len = models.PositiveIntegerField(default=0)
    extends_previous = models.BooleanField(default=False)
    history_rewritten = models.BooleanField(default=False)
    request_recorded = models.BooleanField(default=True)
    message_count = models.PositiveIntegerField(default=0)
    system_digest = models.CharField(max_length=40, blank=True)
    tools_digest = models.CharField(max_length=40, blank=True)
    tools_count = models.PositiveIntegerField(default=0)
    appended_digests = models.JSONField(default=list)
    response_digest = models.CharField(max_length=40, blank=True)
    # What the call page shows, normalised at ingest (traces.core.stored_message) so no
    # page reads raw messages with an adapter: one digest per appended message, and the
    # response's. NULL: stored before these were kept (`manage.py reanalyze` fills them).
    appended_message_digests = models.JSONField(null=True, default=None)
    response_message_digest = models.CharField(max_length=40, blank=True)
    extra_digest = models.CharField(max_length=40, blank=True)
    tool_call_ids = NulSafeJSONField(default=list)

    class Meta:
        ordering = ["trace", "index"]
        constraints = [models.UniqueConstraint("trace", "index", name="unique_call_index")]

    @property
    def duration_s(self) -> float | None:
        return seconds_between(self.started_at, self.ended_at)

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


class ToolRun(models.Model):
    """A tool call paired with its result by id."""

    trace = models.ForeignKey("traces.Trace", on_delete=models.CASCADE, related_name="tool_runs")
    position = models.PositiveIntegerField()
    tool_call_id = NulSafeCharField(max_length=300)
    name = NulSafeCharField(max_length=300, blank=True)
    loop = models.PositiveIntegerField()
    call = models.PositiveIntegerField(null=True)
    result_call = models.PositiveIntegerField(null=True)
    status = models.CharField(max_length=10)
    is_error = models.BooleanField(default=False)
    batch_size = models.PositiveIntegerField(default=1)
    input_digest = models.CharField(max_length=40, blank=True)
    result_preview = NulSafeTextField(blank=True)

    class Meta:
        ordering = ["trace", "position"]
        constraints = [
            models.UniqueConstraint("trace", "position", name="unique_tool_run_position")
        ]

    @property
    def error_inferred(self) -> str | None:
        """Why the result reads as a failure though nothing flagged it (the core's rule,
        applied to the stored preview, so no column is needed)."""
        if self.is_error or self.status not in ("paired", "orphan"):
            return None
        return inferred_error(self.result_preview)


class LineError(models.Model):
    trace = models.ForeignKey("traces.Trace", on_delete=models.CASCADE, related_name="line_errors")
    line = models.PositiveIntegerField()
    message = NulSafeCharField(max_length=500)

    class Meta:
        ordering = ["trace", "line"]


SEARCH_FTS_TABLE = "traces_searchentry_fts"
"""SQLite's FTS5 table over each `SearchEntry`'s text (migrations 0022 and 0034; absent
without FTS5): contentless, so the text is held once, packed, in the entry's row."""
SEARCH_TEXT_FUNCTION = "traces_search_text"
"""SQLite's function of (body, packed), an entry's text (traces.storage.search_index
registers it on every connection): FTS5's triggers index and forget the text with it."""
SEARCH_DOCUMENT = (
    "to_tsvector('simple'::regconfig, regexp_replace(body, '[^[:alnum:]]+', ' ', 'g'))"
)
"""PostgreSQL's `tsvector` of an entry, spelled as its GIN index is (migration 0034): a
query that spells it otherwise is not answered from the index. The bare column, named by
no alias: Django relabels the table's alias when a queryset becomes a subquery, and no
other table of the list's queries has a `body`."""
SEARCH_TRACE_KEY_INDEX = "search_entry_trace_key"
"""(id, trace_id) of `SearchEntry` (migration 0030): on SQLite the trace of each entry
FTS5 matched, read from this small index instead of the row, where `trace_id` comes after
the ~2 KB `body`: reading it reads the whole row, a page or more each, 10,000 of them for a
word in every trace (3-4x slower, measured with sqlite3 on bench/list.py's rows)."""


class SearchEntry(models.Model):
    """One call's text for content search (traces.core.outputs.content_search `call_text`:
    appended messages, the response, tool arguments and results, capped per piece).

    Written with the call (traces.storage.search_index), removed with it. The text is in
    `body` or, packed (traces.core.reading.blobs `pack_text`), in `packed` with `body`
    empty: packed on SQLite with FTS5, whose index keeps no copy of it (issue 25: the
    text was 0.8x the original of a 20,000-call session, its index 0.25x); as text where
    the database reads it itself (PostgreSQL's index, a scan without FTS5), and in rows
    stored before migration 0034. `text` is the one to read. The index is the
    database's own, made outside the ORM: on SQLite a contentless FTS5 table kept in step
    by triggers, on PostgreSQL a GIN index of `SEARCH_DOCUMENT`; the selector
    (traces.selectors.content) queries whichever exists.
    """

    trace = models.ForeignKey(
        "traces.Trace", on_delete=models.CASCADE, related_name="search_entries"
    )
    call_index = models.PositiveIntegerField()
    body = models.TextField(blank=True)
    packed = models.BinaryField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint("trace", "call_index", name="unique_search_entry_call")
        ]
        indexes = [models.Index(fields=["id", "trace"], name=SEARCH_TRACE_KEY_INDEX)]

    @property
    def text(self) -> str:
        return entry_text(self.body, self.packed)


def entry_text(body: str, packed: bytes | memoryview | None) -> str:
    """A search entry's text from its two columns (see `SearchEntry`)."""
    return body if packed is None else blobs.unpack_text(packed)


class UsageSlot(models.Model):
    """One (UTC hour, model) of a trace: calls, tokens per kind, and the dollars split by
    kind of token and by what the input carried (traces.core.outputs.usage_rows). The
    usage page and command add these up instead of reading reports."""

    trace = models.ForeignKey("traces.Trace", on_delete=models.CASCADE, related_name="usage_slots")
    hour = models.BigIntegerField(help_text="Start of the UTC hour, epoch seconds.")
    model = NulSafeCharField(max_length=200, blank=True)
    calls = models.PositiveIntegerField(default=0)
    priced_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    uncached_input_usd = models.FloatField(default=0.0)
    cache_read_usd = models.FloatField(default=0.0)
    cache_write_usd = models.FloatField(default=0.0)
    output_usd = models.FloatField(default=0.0)
    prefix_usd = models.FloatField(default=0.0)
    tool_results_usd = models.FloatField(default=0.0)
    replayed_output_usd = models.FloatField(default=0.0)
    other_usd = models.FloatField(default=0.0)

    class Meta:
        ordering = ["trace", "hour", "model"]
        indexes = [models.Index(fields=["hour", "trace"], name="usage_slot_hour_idx")]


class UsageFinding(models.Model):
    """One rule's findings in one hour of a trace, and the dollars they point at."""

    trace = models.ForeignKey(
        "traces.Trace", on_delete=models.CASCADE, related_name="usage_findings"
    )
    hour = models.BigIntegerField()
    rule = models.CharField(max_length=60)
    count = models.PositiveIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)

    class Meta:
        ordering = ["trace", "hour", "rule"]
        indexes = [
            models.Index(fields=["hour", "trace"], name="usage_finding_hour_idx"),
            # Covers the usage summary's sum per rule: SQLite reads it in rule order
            # instead of sorting every row (traces.selectors.usage).
            models.Index(
                fields=["rule", "trace", "count", "cost_usd"], name="usage_finding_rule_idx"
            ),
        ]


class UsageSaving(models.Model):
    """What one what-if lever would have saved on a trace (its hour: the trace's start)."""

    trace = models.ForeignKey(
        "traces.Trace", on_delete=models.CASCADE, related_name="usage_savings"
    )
    hour = models.BigIntegerField()
    lever = NulSafeCharField(max_length=300)
    scenario = NulSafeCharField(max_length=60)
    usd_saved = models.FloatField(null=True)
    tokens_saved = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["trace", "lever"]
        indexes = [
            models.Index(fields=["hour", "trace"], name="usage_saving_hour_idx"),
            # Covers the summary's sum per lever, read in lever order instead of sorted.
            models.Index(
                fields=["lever", "scenario", "trace", "usd_saved", "tokens_saved"],
                name="usage_saving_lever_idx",
            ),
        ]
        constraints = [
            # One saving per lever and trace (the what-if names each fix once), so the
            # summary counts a lever's sessions as its rows, without a DISTINCT sort.
            models.UniqueConstraint(fields=["trace", "lever"], name="usage_saving_once"),
        ]
