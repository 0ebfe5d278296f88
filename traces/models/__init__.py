"""Storage only: traces, where their original bytes are, content-addressed blobs, live state.

The derived rows (calls, tool runs, findings) live in `traces.models.rows` and the accounts
in `traces.models.accounts`; both are re-exported here, so `models.Call` reads as one module.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F

from traces.core.outputs.summary import OUTCOME_LABELS
from traces.fields import NulSafeCharField, NulSafeJSONField, NulSafeTextField, PackedJSONField
from traces.models.accounts import (  # the accounts half of the storage, split off for size
    DEFAULT_PROJECT_SLUG as DEFAULT_PROJECT_SLUG,
)
from traces.models.accounts import (
    ApiToken as ApiToken,
)
from traces.models.accounts import (
    AuditEvent as AuditEvent,
)
from traces.models.accounts import (
    Membership as Membership,
)
from traces.models.accounts import (
    ModelPrice as ModelPrice,
)
from traces.models.accounts import (
    Project as Project,
)
from traces.models.accounts import (
    ShareLink as ShareLink,
)
from traces.models.accounts import (
    default_project_id as default_project_id,
)
from traces.models.rows import (
    Call as Call,
)
from traces.models.rows import (
    LineError as LineError,
)
from traces.models.rows import (
    SearchEntry as SearchEntry,
)
from traces.models.rows import (
    ToolRun as ToolRun,
)
from traces.models.rows import (
    TraceRule as TraceRule,
)
from traces.models.rows import (
    UsageFinding as UsageFinding,
)
from traces.models.rows import (
    UsageSaving as UsageSaving,
)
from traces.models.rows import (
    UsageSlot as UsageSlot,
)
from traces.models.rows import seconds_between


class Blob(models.Model):
    """One unique JSON value (message, system prompt, tool list, response), by digest."""

    digest = models.CharField(primary_key=True, max_length=40)
    size = models.PositiveIntegerField(help_text="Bytes of the JSON before compression.")
    data = models.BinaryField()


class Label(models.Model):
    """A tag on traces ("baseline", "prompt-v2"), set on upload, in the API or on the page."""

    name = NulSafeCharField(max_length=60, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class RunSet(models.Model):
    """Runs uploaded together (an eval's samples, a night of agent jobs): each run is its
    own trace; the set groups them for one page of outcomes, findings and distributions."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(
        Project, on_delete=models.PROTECT, related_name="run_sets", default=default_project_id
    )
    name = NulSafeCharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint("project", "name", name="unique_set_name_per_project")
        ]
        indexes = [models.Index(fields=["name"], name="runset_name_idx")]  # `?set=<name>`

    def __str__(self) -> str:
        return self.name


class RunSetFile(models.Model):
    """A file as it was uploaded into a set (a ZIP, an .eval), kept byte-identical and
    compressed in storage (traces.storage.originals); its runs are stored as traces of their own."""

    run_set = models.ForeignKey(RunSet, on_delete=models.CASCADE, related_name="files")
    filename = NulSafeCharField(max_length=300)
    sha256 = models.CharField(max_length=64)
    raw_bytes = models.BigIntegerField()
    key = models.CharField(max_length=300, help_text="The zstd object's name in storage.")
    runs = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [models.UniqueConstraint("run_set", "sha256", name="unique_set_file_sha256")]


class Trace(models.Model):
    class State(models.TextChoices):
        COMPLETE = "complete"
        LIVE = "live"
        CLOSED = "closed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(
        Project, on_delete=models.PROTECT, related_name="traces", default=default_project_id
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    redacted = NulSafeJSONField(
        default=dict, help_text="Credentials redacted from the original at ingest: name -> count."
    )
    name = NulSafeCharField(max_length=300)
    format = models.CharField(max_length=60)
    detection_reason = NulSafeCharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.COMPLETE)

    source_filename = NulSafeCharField(max_length=300, blank=True)
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
    outcome_text = NulSafeCharField(max_length=500, blank=True)
    flags_count = models.PositiveIntegerField(default=0)

    # The report, compressed (traces.fields.PackedJSONField): read whole, never queried by key.
    report = PackedJSONField(default=dict)
    report_version = models.PositiveBigIntegerField(
        default=1,
        help_text="Incremented on every save of the report: with the id, the key of each "
        "process's cache of decoded reports (traces.storage.report_cache).",
    )

    # Denormalised from the report (traces.core.outputs.runstats) so the list filters and sorts
    # thousands of runs, and set pages aggregate hundreds, without loading reports.
    cost_usd = models.FloatField(null=True, blank=True)
    model = NulSafeCharField(max_length=200, blank=True)
    tool_names = NulSafeTextField(blank=True, help_text="Tool names called, space-separated.")
    error_results = models.PositiveIntegerField(default=0)
    stats = NulSafeJSONField(default=dict, blank=True)
    labels = models.ManyToManyField(Label, blank=True, related_name="traces")
    run_set = models.ForeignKey(
        RunSet, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )

    # Live tail (see traces/live.py): the last event number handed to viewers, when the
    # agent last sent lines (for the idle timeout), and how many lines `report` covers.
    events_seq = models.PositiveIntegerField(default=0)
    live_activity_at = models.DateTimeField(null=True, blank=True)
    report_lines = models.PositiveIntegerField(default=0)
    # What a capture (the recording proxy, the OTLP receiver) files its lines under:
    # `proxy:<format>:<session>` or `otlp:<trace id>`; blank for uploads and tails.
    capture_key = models.CharField(max_length=200, blank=True, db_index=True)
    # Which agent session the trace is, as its reader (or the watcher) found it: the
    # list filters and groups by these. `working_dir` is the agent's recorded project.
    agent = NulSafeCharField(max_length=100, blank=True)
    working_dir = NulSafeCharField(max_length=500, blank=True)
    session_id = NulSafeCharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["-created_at", "-id"], name="trace_created_idx"),
            models.Index(fields=["cost_usd"], name="trace_cost_idx"),
            models.Index(fields=["calls_count"], name="trace_calls_idx"),
            models.Index(fields=["flags_count"], name="trace_flags_idx"),
            models.Index(fields=["outcome_kind", "-created_at"], name="trace_outcome_idx"),
            models.Index(fields=["format", "-created_at"], name="trace_format_idx"),
            models.Index(fields=["model"], name="trace_model_idx"),
            models.Index(fields=["run_set", "-created_at"], name="trace_set_idx"),
            models.Index(fields=["run_set", "source_sha256"], name="trace_set_sha_idx"),
            models.Index(fields=["agent", "working_dir"], name="trace_agent_idx"),
            # The list's other filters (issue 25): live traces, a project alone, error
            # results. Substring search has its own per-database indexes (migration 0027).
            models.Index(fields=["state", "-created_at"], name="trace_state_idx"),
            models.Index(fields=["working_dir", "-created_at"], name="trace_project_idx"),
            models.Index(fields=["error_results"], name="trace_errors_idx"),
        ]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Saving the report increments `report_version` in the row (an F expression, so
        two writers never store the same version), then reads the new version back."""
        update_fields = kwargs.get("update_fields")
        if update_fields is None:
            writes_report = "report" not in self.get_deferred_fields()
        else:
            writes_report = "report" in update_fields
        if self._state.adding or not writes_report:
            super().save(*args, **kwargs)
            return
        self.report_version = F("report_version") + 1  # type: ignore[assignment]
        if update_fields is not None:
            kwargs["update_fields"] = [*update_fields, "report_version"]
        super().save(*args, **kwargs)
        self.report_version = (
            Trace.objects.using(self._state.db)
            .filter(pk=self.pk)
            .values_list("report_version", flat=True)
            .get()
        )

    @property
    def wall_time_s(self) -> float | None:
        return seconds_between(self.started_at, self.ended_at)

    @property
    def outcome_label(self) -> str:
        return OUTCOME_LABELS.get(self.outcome_kind, "—")

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


class SourceChunk(models.Model):
    """Where the uploaded bytes are: each chunk is one zstd object in storage (see
    traces.storage.originals); concatenated in order they are the file as received.

    A live trace stores one chunk per accepted batch of lines: `first_line` (1-based) and
    `line_count` say which lines it holds, so a process can replay what it missed.
    """

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="chunks")
    seq = models.PositiveIntegerField()
    raw_bytes = models.BigIntegerField()
    key = models.CharField(max_length=300, help_text="The zstd object's name in storage.")
    first_line = models.PositiveIntegerField(default=1)
    line_count = models.PositiveIntegerField(default=0)
    filename = NulSafeCharField(
        max_length=300,
        blank=True,
        help_text="Set when several files make one trace (a session and its subagents): "
        "each chunk is then one whole file.",
    )

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint("trace", "seq", name="unique_chunk_seq")]


class ReportPart(models.Model):
    """One part of a trace's report as a diagram window reads it (number 0: the head
    every window shares; n: calls (n - 1) * 100 + 1 to n * 100 with their runs and
    findings; traces.core.outputs.render.sequence.window_parts), so moving the window of
    a long loop reads its own parts, not the whole report. `report_version` says which
    report they were cut from: a part of another version is never read."""

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="report_parts")
    number = models.PositiveIntegerField()
    report_version = models.PositiveBigIntegerField()
    data = PackedJSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["trace", "number"], name="report_part_unique")
        ]


class PageSummary(models.Model):
    """What the trace page reads of its trace's report besides the diagram window
    (traces.core.outputs.page_summary), written with the report's parts so the page of a
    long trace reads a few kilobytes and its window's parts, not the whole report.
    `report_version` says which report it was made from: another version is never read."""

    trace = models.OneToOneField(Trace, on_delete=models.CASCADE, related_name="page_summary")
    report_version = models.PositiveBigIntegerField()
    data = PackedJSONField(default=dict)


class ReportView(models.Model):
    """A JSON answer computed from a trace's whole report and kept beside it
    (traces.storage.report_views): a long loop's charts and its default what-if, which
    diagram.json, figures.json and what-if.json send as they are, so a request on a
    20,000-call trace reads some hundred kilobytes instead of decoding the report.
    `report_version` says which report it was made from: another version is never read."""

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="report_views")
    name = models.CharField(max_length=100)
    report_version = models.PositiveBigIntegerField()
    data = PackedJSONField(default=dict)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["trace", "name"], name="report_view_unique")]


class LiveEvent(models.Model):
    """One message pushed to the viewers of a live trace, kept so late viewers catch up.

    `seq` increases by one per event of a trace (`Trace.events_seq` holds the last).
    """

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="live_events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=20)
    payload = NulSafeJSONField(default=dict)

    class Meta:
        ordering = ["trace", "seq"]
        constraints = [models.UniqueConstraint("trace", "seq", name="unique_live_event_seq")]


class LiveRefresh(models.Model):
    """A live trace's report refresh, coalesced across processes and queue workers: at
    most one queued (`scheduled_at`), never two running (`running_since`), and none
    before `not_before`. Conditional UPDATEs on this row are the lock."""

    trace = models.OneToOneField(
        Trace, on_delete=models.CASCADE, primary_key=True, related_name="refresh"
    )
    scheduled_at = models.DateTimeField(null=True, blank=True)
    running_since = models.DateTimeField(null=True, blank=True)
    not_before = models.DateTimeField(null=True, blank=True)


class Job(models.Model):
    """Background work a client can follow: a large upload's ingest, or a reanalysis; and
    an OTLP export answered once queued, stored by the queue."""

    class Kind(models.TextChoices):
        UPLOAD = "upload"
        REANALYZE = "reanalyze"
        OTLP = "otlp"  # an OTLP export queued by the receiver (traces.capture.otlp_queue)

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    state = models.CharField(max_length=20, choices=State.choices, default=State.QUEUED)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    trace = models.ForeignKey(
        Trace, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    filename = models.CharField(max_length=300, blank=True)
    path = models.CharField(max_length=1000, blank=True)
    """The streamed upload under INSPECTOR_DATA_DIR, removed once ingested."""
    options = models.JSONField(default=dict, blank=True)
    """Name, format and labels asked for with the upload."""
    bytes_total = models.BigIntegerField(default=0)
    bytes_read = models.BigIntegerField(default=0)
    records_parsed = models.IntegerField(default=0)
    calls_rebuilt = models.IntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    """Written by the worker running the job every JOB_STALE_SECONDS / 4; a running job
    whose heartbeat is older than JOB_STALE_SECONDS lost its worker (traces.services.jobs)."""
    attempts = models.PositiveIntegerField(default=0)
    """Times a worker has taken the job; after JOB_MAX_ATTEMPTS it fails instead."""

    class Meta:
        ordering = ["-created_at"]


class WatchedSession(models.Model):
    """A session file or folder the watcher (`traces.live.watch`) found, and how far it has
    read it: a restart resumes at `offset` and never imports a session twice."""

    class State(models.TextChoices):
        LIVE = "live"  # a growing JSONL file, followed into a live trace
        DONE = "done"  # imported whole (a finished session, or a document)
        ERROR = "error"  # could not be imported: `error` says why
        MISSING = "missing"  # was found before, is gone now (its trace is kept)

    path = NulSafeCharField(max_length=1000, unique=True)
    store = models.CharField(max_length=60, help_text="The store's key (traces.core.discovery).")
    location = NulSafeCharField(max_length=1000, help_text="The store's folder it was found in.")
    agent = NulSafeCharField(max_length=100)
    format = models.CharField(max_length=60)
    trace = models.ForeignKey(
        Trace, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    offset = models.BigIntegerField(
        default=0, help_text="Bytes read: up to the last complete line."
    )
    lines_sent = models.PositiveIntegerField(default=0, help_text="Lines appended to the trace.")
    head_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="Of the bytes read, up to 4 KiB: tells an append from a rewrite.",
    )
    size = models.BigIntegerField(default=0)
    mtime = models.FloatField(default=0)
    state = models.CharField(max_length=10, choices=State.choices)
    error = NulSafeTextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["store", "location"], name="watched_store_idx")]

    def __str__(self) -> str:
        return self.path


class UploadKey(models.Model):
    """An upload's `Idempotency-Key` and what it made: a client that lost the answer (a
    dropped connection, a killed server) and sends the same upload again gets the first
    upload's trace or job back, never a second trace (issue 26). Kept as long as that trace
    or job is; `sha256` refuses the key reused for other bytes."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    sha256 = models.CharField(max_length=64, help_text="Of the upload's files.")
    trace = models.ForeignKey(
        Trace, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint("project", "key", name="unique_upload_key")]


class Note(models.Model):
    """A person's note on a trace, one of its calls or one of its tool runs, or the mark
    that this is the root cause (issue 27: notes for post-mortems).

    People's data, not derived: a note names its call by index and its tool run by tool
    call id, never by a row, so reanalysis (which rebuilds the calls and tool runs) keeps
    it. The author is empty in local mode; the text is Markdown, shown only through
    `traces.core.outputs.notes`.
    """

    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="notes")
    call_index = models.PositiveIntegerField(null=True, blank=True)
    tool_call_id = NulSafeCharField(max_length=300, blank=True, default="")
    root_cause = models.BooleanField(default=False)
    text = NulSafeTextField(blank=True, default="")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    author_label = models.CharField(
        max_length=200, blank=True, help_text="Who wrote it (user or token), kept if the user goes."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["trace", "call_index"], name="note_trace_call_idx")]
