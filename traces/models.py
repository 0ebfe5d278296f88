"""Storage only: traces, their original bytes, content-addressed blobs and derived rows."""

from __future__ import annotations

import uuid

from django.db import models

from traces.core.summary import OUTCOME_LABELS


class Blob(models.Model):
    """One unique JSON value (message, system prompt, tool list, response), by digest."""

    digest = models.CharField(primary_key=True, max_length=40)
    size = models.PositiveIntegerField(help_text="Bytes of the JSON before compression.")
    data = models.BinaryField()


class Trace(models.Model):
    class State(models.TextChoices):
        COMPLETE = "complete"
        LIVE = "live"
        CLOSED = "closed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=300)
    format = models.CharField(max_length=60)
    detection_reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.COMPLETE)

    source_filename = models.CharField(max_length=300, blank=True)
    source_bytes = models.BigIntegerField(default=0)
    source_sha256 = models.CharField(max_length=64, blank=True)
    lines_total = models.PositiveIntegerField(default=0)
    records_ingested = models.PositiveIntegerField(default=0)

    calls_count = models.PositiveIntegerField(default=0)
    failed_calls = models.PositiveIntegerField(default=0)
    loops_count = models.PositiveIntegerField(default=0)
    tool_runs_count = models.PositiveIntegerField(default=0)
    line_errors_count = models.PositiveIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cache_read_tokens = models.BigIntegerField(default=0)
    cache_write_tokens = models.BigIntegerField(default=0)
    started_at = models.FloatField(null=True)
    ended_at = models.FloatField(null=True)
    outcome_kind = models.CharField(max_length=30, blank=True)
    outcome_text = models.CharField(max_length=500, blank=True)
    flags_count = models.PositiveIntegerField(default=0)

    report = models.JSONField(default=dict)

    # Live tail (see traces/live.py): the last event number handed to viewers, when the
    # agent last sent lines (for the idle timeout), and how many lines `report` covers.
    events_seq = models.PositiveIntegerField(default=0)
    live_activity_at = models.DateTimeField(null=True, blank=True)
    report_lines = models.PositiveIntegerField(default=0)
    # What a capture (the recording proxy, the OTLP receiver) files its lines under:
    # `proxy:<format>:<session>` or `otlp:<trace id>`; blank for uploads and tails.
    capture_key = models.CharField(max_length=200, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def wall_time_s(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0.0, self.ended_at - self.started_at)

    @property
    def outcome_label(self) -> str:
        return OUTCOME_LABELS.get(self.outcome_kind, "—")

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


class SourceChunk(models.Model):
    """The uploaded bytes, compressed; concatenated in order they are the file as received.

    A live trace stores one chunk per accepted batch of lines: `first_line` (1-based) and
    `line_count` say which lines it holds, so a process can replay what it missed.
    """

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="chunks")
    seq = models.PositiveIntegerField()
    raw_bytes = models.BigIntegerField()
    data = models.BinaryField()
    first_line = models.PositiveIntegerField(default=1)
    line_count = models.PositiveIntegerField(default=0)
    filename = models.CharField(
        max_length=300,
        blank=True,
        help_text="Set when several files make one trace (a session and its subagents): "
        "each chunk is then one whole file.",
    )

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint("trace", "seq", name="unique_chunk_seq")]


class Call(models.Model):
    """One billed model round trip. Its request is a delta on `base_call` (see core.model)."""

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="calls")
    index = models.PositiveIntegerField()
    loop = models.PositiveIntegerField()
    line = models.PositiveIntegerField()
    model = models.CharField(max_length=200, blank=True)
    stop_reason = models.CharField(max_length=60, blank=True)
    status = models.CharField(max_length=10)
    error = models.TextField(blank=True)
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
    extra_digest = models.CharField(max_length=40, blank=True)
    tool_call_ids = models.JSONField(default=list)

    class Meta:
        ordering = ["trace", "index"]
        constraints = [models.UniqueConstraint("trace", "index", name="unique_call_index")]

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0.0, self.ended_at - self.started_at)

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


class ToolRun(models.Model):
    """A tool call paired with its result by id."""

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="tool_runs")
    position = models.PositiveIntegerField()
    tool_call_id = models.CharField(max_length=300)
    name = models.CharField(max_length=300, blank=True)
    loop = models.PositiveIntegerField()
    call = models.PositiveIntegerField(null=True)
    result_call = models.PositiveIntegerField(null=True)
    status = models.CharField(max_length=10)
    is_error = models.BooleanField(default=False)
    batch_size = models.PositiveIntegerField(default=1)
    input_digest = models.CharField(max_length=40, blank=True)
    result_preview = models.TextField(blank=True)

    class Meta:
        ordering = ["trace", "position"]
        constraints = [
            models.UniqueConstraint("trace", "position", name="unique_tool_run_position")
        ]


class LineError(models.Model):
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="line_errors")
    line = models.PositiveIntegerField()
    message = models.CharField(max_length=500)

    class Meta:
        ordering = ["trace", "line"]


class LiveEvent(models.Model):
    """One message pushed to the viewers of a live trace, kept so late viewers catch up.

    `seq` increases by one per event of a trace (`Trace.events_seq` holds the last).
    """

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="live_events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=20)
    payload = models.JSONField(default=dict)

    class Meta:
        ordering = ["trace", "seq"]
        constraints = [models.UniqueConstraint("trace", "seq", name="unique_live_event_seq")]
