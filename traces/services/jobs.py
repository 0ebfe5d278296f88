"""Background jobs a client can follow: a large upload streamed to disk then ingested; reanalysis.

A large upload is written to INSPECTOR_DATA_DIR/uploads/ a chunk at a time (the web
process never holds it whole), a `Job` row says where it stands, and a queue task
(traces.taskqueue) ingests it by the same `traces.services.upload.trace_upload` as a small
upload, writing bytes read, records parsed and calls rebuilt as it goes.
`GET /api/jobs/<id>` (traces.api.jobs) answers the state to the upload page's bar.

A worker can die mid-job (killed, out of memory, its machine gone). While a job runs, a
thread writes its heartbeat every JOB_STALE_SECONDS / 4; `recover_stale_jobs` (a periodic
queue task, and the status endpoint for the job it is asked about) queues again a running
job whose heartbeat is older than JOB_STALE_SECONDS, since its input is still there (the
streamed upload is removed only once ingested; a reanalysis reads the stored original),
and fails it with the reason after JOB_MAX_ATTEMPTS workers died on it. A job is done in
its trace's transaction: no kill leaves a trace whose job recovery would run again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone
from huey import crontab
from huey.api import TaskWrapper
from huey.contrib.djhuey import db_periodic_task, db_task

from traces import models
from traces.conf import inspector_settings
from traces.core.labels import clean_labels
from traces.core.reading.limits import InputRejected
from traces.services import idempotency
from traces.services.ingest import trace_reanalyze
from traces.services.upload import trace_upload
from traces.taskqueue import enqueue as queue

log = logging.getLogger(__name__)

READ_CHUNK = 1024 * 1024
PROGRESS_EVERY = 0.25
"""Seconds between two progress writes to the job's row."""


def uploads_dir() -> Path:
    folder = Path(settings.INSPECTOR_DATA_DIR) / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class IncompleteUpload(Exception):
    """The body ended before its declared length: nothing is queued (the client retries)."""


@dataclass(frozen=True)
class ReceivedUpload:
    """An upload complete on disk under its final name, before any job row exists."""

    job_id: uuid.UUID
    path: Path
    size: int
    sha256: str
    """Of the bytes written (an `Idempotency-Key` is checked against it)."""


def receive_upload(chunks: Iterable[bytes], *, declared: int | None = None) -> ReceivedUpload:
    """Stream the upload's chunks to a temporary file, check its length against the one
    declared (Content-Length, or the multipart part's size), then rename it: a process
    killed while writing leaves a `.partial` file and no job (issue 26: a truncated body
    was ingested as done). Runs off the event loop and never holds more than a chunk."""
    job_id = uuid.uuid4()
    final = uploads_dir() / f"{job_id}.upload"
    partial = final.with_suffix(".partial")
    written = 0
    digest = hashlib.sha256()
    try:
        with open(partial, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
                digest.update(chunk)
                written += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        if declared is not None and written != declared:
            raise IncompleteUpload(
                f"The upload ended after {written:,} of its {declared:,} bytes; send it again."
            )
        partial.rename(final)
        _sync_folder(final.parent)  # the rename itself survives a crash
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return ReceivedUpload(job_id, final, written, digest.hexdigest())


def _sync_folder(folder: Path) -> None:
    """fsync a folder: a rename is durable once its folder's entry is on disk (the OTLP
    receiver answers the exporter once its export is)."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def new_upload_job(
    *,
    filename: str,
    received: ReceivedUpload,
    options: dict[str, Any],
    project: models.Project,
    created_by: Any = None,
    key: str | None = None,
) -> models.Job:
    """The job row of an upload already complete on disk (see `receive_upload`), and its
    `Idempotency-Key` in the same transaction (IntegrityError: another upload holds it)."""
    with transaction.atomic():
        job = models.Job.objects.create(
            id=received.job_id,
            kind=models.Job.Kind.UPLOAD,
            project=project,
            created_by=created_by,
            filename=filename[:300],
            path=str(received.path),
            options=options,
            bytes_total=received.size,
        )
        if key:
            idempotency.remember_job(job, key, received.sha256)
    return job


def queue_upload_job(job: models.Job) -> None:
    """Queue the ingest of a job's upload (its row is committed already)."""
    queue.enqueue(ingest_upload_job, str(job.pk))


def forget_upload(received: ReceivedUpload) -> None:
    """Drop a received upload that will not become a job."""
    received.path.unlink(missing_ok=True)


def queue_reanalysis(trace: models.Trace) -> models.Job:
    """A job that re-runs the core on a stored trace, on a worker."""
    job = models.Job.objects.create(
        kind=models.Job.Kind.REANALYZE,
        project_id=trace.project_id,
        trace=trace,
        filename=trace.source_filename[:300],
        bytes_total=trace.source_bytes,
    )
    queue.enqueue(reanalyze_job, str(job.pk))
    return job


def claim(job_id: Any) -> models.Job | None:
    """The job, now running; None when another worker took it or it is finished."""
    rows = models.Job.objects.filter(pk=job_id, state=models.Job.State.QUEUED)
    taken = rows.update(
        state=models.Job.State.RUNNING, heartbeat_at=timezone.now(), attempts=F("attempts") + 1
    )
    if not taken:
        return None
    return models.Job.objects.select_related("project").get(pk=job_id)


def _stale_seconds() -> float:
    return float(inspector_settings()["JOB_STALE_SECONDS"])


@contextmanager
def heartbeat(job_id: Any) -> Iterator[None]:
    """Write the running job's heartbeat every JOB_STALE_SECONDS / 4 while the block runs.
    A thread, not the progress callbacks: storing a large trace runs long without any."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(_stale_seconds() / 4):
                try:
                    models.Job.objects.filter(pk=job_id, state=models.Job.State.RUNNING).update(
                        heartbeat_at=timezone.now()
                    )
                except DatabaseError:  # a busy database: the next beat tries again
                    log.warning("job %s: heartbeat not written", job_id, exc_info=True)
        finally:
            connection.close()  # this thread's connection (back to the pool)

    thread = threading.Thread(target=beat, name=f"job-heartbeat-{job_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _fail(job_id: Any, message: str) -> None:
    """Fail an unfinished job; a done one keeps its trace (the audit after it may fail)."""
    unfinished = models.Job.objects.filter(pk=job_id).exclude(state=models.Job.State.DONE)
    unfinished.update(state=models.Job.State.FAILED, error=message)


class AlreadyDone(Exception):
    """Another worker stored this job's trace first: this one's is rolled back."""


@db_task()
def ingest_upload_job(job_id: str) -> None:
    job = claim(job_id)
    if job is None:
        return
    if not Path(job.path).exists():
        _fail(job.pk, "The uploaded file is no longer on the server; upload it again.")
        return
    size = Path(job.path).stat().st_size
    if size != job.bytes_total:
        _fail(
            job.pk,
            f"The uploaded file has {size:,} of its {job.bytes_total:,} bytes; upload it again.",
        )
        Path(job.path).unlink(missing_ok=True)
        return
    try:
        with heartbeat(job.pk):
            run_upload(job)
    except AlreadyDone:
        log.warning("background upload %s: another worker stored it first", job.pk)
    except InputRejected as exc:
        _fail(job.pk, f"{job.filename}: {exc}" if job.filename else str(exc))
    except Exception as exc:
        log.exception("background upload %s failed", job.pk)
        _fail(job.pk, f"The ingest failed ({type(exc).__name__}); the server log has details.")
    finally:
        Path(job.path).unlink(missing_ok=True)


def run_upload(job: models.Job) -> models.Trace:
    """Read the streamed file (telling bytes read), ingest it (telling records and
    calls), store it, and mark the job done with its trace."""
    rows = models.Job.objects.filter(pk=job.pk)
    buffer = bytearray()
    told = 0.0
    with open(job.path, "rb") as source:
        while chunk := source.read(READ_CHUNK):
            buffer += chunk
            if time.monotonic() - told >= PROGRESS_EVERY:
                rows.update(bytes_read=len(buffer))
                told = time.monotonic()
    data = bytes(buffer)
    del buffer
    rows.update(bytes_read=len(data), bytes_total=len(data))

    last = [0.0]

    def progress(records: int, calls: int) -> None:
        if time.monotonic() - last[0] >= PROGRESS_EVERY:
            rows.update(records_parsed=records, calls_rebuilt=calls)
            last[0] = time.monotonic()

    def done(trace: models.Trace) -> None:
        """In the trace's transaction: the job done with it (a kill after the commit leaves
        a done job), unless a worker thought dead got there first."""
        if rows.select_for_update().filter(trace__isnull=False).exists():
            raise AlreadyDone(str(job.pk))
        rows.update(
            state=models.Job.State.DONE,
            trace=trace,
            records_parsed=trace.records_ingested,
            calls_rebuilt=trace.calls_count,
        )

    options = job.options
    result = trace_upload(
        files=[(job.filename, data)],
        name=options.get("name") or "",
        who=options.get("who") or "background upload",
        project=job.project,
        format_name=options.get("format") or None,
        labels=clean_labels(options.get("labels") or []),
        created_by=job.created_by,
        progress=progress,
        on_stored=done,
    )
    return result.trace


@db_task()
def reanalyze_job(job_id: str) -> None:
    job = claim(job_id)
    if job is None:
        return
    if job.trace is None:
        _fail(job.pk, "The trace was deleted.")
        return
    try:
        with heartbeat(job.pk):
            core = trace_reanalyze(trace=job.trace).core
    except InputRejected as exc:
        _fail(job.pk, str(exc))
        return
    except Exception as exc:
        log.exception("reanalysis job %s failed", job.pk)
        _fail(job.pk, f"The reanalysis failed ({type(exc).__name__}).")
        return
    models.Job.objects.filter(pk=job.pk).update(
        state=models.Job.State.DONE,
        bytes_read=job.bytes_total,
        records_parsed=core.records_ingested,
        calls_rebuilt=len(core.calls),
    )


TASKS = MappingProxyType(
    {models.Job.Kind.UPLOAD: ingest_upload_job, models.Job.Kind.REANALYZE: reanalyze_job}
)


def is_stale(job: models.Job, now: dt.datetime | None = None) -> bool:
    """Whether an unfinished job has shown no sign of life for JOB_STALE_SECONDS."""
    if job.state not in (models.Job.State.QUEUED, models.Job.State.RUNNING):
        return False
    last = job.heartbeat_at or job.created_at
    return last < (now or timezone.now()) - dt.timedelta(seconds=_stale_seconds())


def recover_stale_jobs(tasks: Mapping[str, TaskWrapper] = TASKS) -> list[str]:
    """Queue again every unfinished job without a sign of life for JOB_STALE_SECONDS: a
    running one lost its worker; a queued one may have been lost with an embedded queue
    (queuing it twice is harmless: one worker claims it). The ids acted on. `tasks`: the
    kinds looked at and their tasks (the OTLP receiver's jobs are queued by a task of the
    capture layer, which recovers them with its own mapping)."""
    cutoff = timezone.now() - dt.timedelta(seconds=_stale_seconds())
    unfinished = models.Job.objects.filter(
        kind__in=list(tasks), state__in=[models.Job.State.QUEUED, models.Job.State.RUNNING]
    )
    quiet = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, created_at__lt=cutoff)
    _remove_abandoned_uploads(older_than=cutoff.timestamp())
    return [str(job.pk) for job in unfinished.filter(quiet) if recover(job, tasks)]


def _remove_abandoned_uploads(*, older_than: float) -> None:
    """Bodies no unfinished job will read, left by a process killed at the wrong moment: a
    `.partial` while `receive_upload` wrote it, an `.upload` before its job row was
    committed, or once its job was done (after the trace's commit, before the unlink)."""
    folder = uploads_dir()
    bodies = [*folder.glob("*.partial"), *folder.glob("*.upload")]
    unfinished = models.Job.objects.filter(
        kind__in=[models.Job.Kind.UPLOAD, models.Job.Kind.OTLP],
        state__in=[models.Job.State.QUEUED, models.Job.State.RUNNING],
    )
    needed = {Path(path).name for path in unfinished.values_list("path", flat=True)}
    for body in bodies:
        if body.name in needed:
            continue
        with contextlib.suppress(OSError):
            if body.stat().st_mtime < older_than:
                body.unlink()


def recover(job: models.Job, tasks: Mapping[str, TaskWrapper] = TASKS) -> bool:
    """Queue a stale job again, or fail it after JOB_MAX_ATTEMPTS; False when another
    process acted on it first (the row changed since it was read), or when `tasks` has
    no task for its kind."""
    if job.kind not in tasks:
        return False
    now = timezone.now()
    unchanged = models.Job.objects.filter(pk=job.pk, state=job.state, heartbeat_at=job.heartbeat_at)
    if job.state == models.Job.State.RUNNING and job.attempts >= int(
        inspector_settings()["JOB_MAX_ATTEMPTS"]
    ):
        seen = timezone.localtime(job.heartbeat_at or job.created_at).isoformat(timespec="seconds")
        reason = (
            f"The worker running this job stopped {job.attempts} times without finishing "
            f"(last sign of life {seen}); it is not retried again."
        )
        if not unchanged.update(state=models.Job.State.FAILED, error=reason, heartbeat_at=now):
            return False
        log.warning("job %s failed: %s", job.pk, reason)
        if job.kind in (models.Job.Kind.UPLOAD, models.Job.Kind.OTLP) and job.path:
            Path(job.path).unlink(missing_ok=True)
        return True
    if not unchanged.update(state=models.Job.State.QUEUED, heartbeat_at=now):
        return False
    log.warning("job %s had no sign of life since %s: queued again", job.pk, job.heartbeat_at)
    queue.enqueue(tasks[job.kind], str(job.pk))
    return True


@db_periodic_task(crontab(minute="*"))
def recover_stale_jobs_task() -> None:
    """Every minute, on the queue's workers: jobs whose worker died are queued again."""
    recover_stale_jobs()


def job_status(job: models.Job, request: Any = None) -> dict[str, Any]:
    """What a client following a job is told."""
    url = reverse("traces:detail", args=[job.trace_id]) if job.trace_id else None
    status_url = reverse("traces:api-job", args=[job.pk])
    if request is not None:
        url = request.build_absolute_uri(url) if url else None
        status_url = request.build_absolute_uri(status_url)
    return {
        "id": str(job.pk),
        "kind": job.kind,
        "state": job.state,
        "filename": job.filename,
        "bytes_total": job.bytes_total,
        "bytes_read": job.bytes_read,
        "records_parsed": job.records_parsed,
        "calls_rebuilt": job.calls_rebuilt,
        "error": job.error or None,
        "trace": str(job.trace_id) if job.trace_id else None,
        "url": url,
        "status_url": status_url,
    }
