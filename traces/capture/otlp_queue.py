"""OTLP exports answered once durably queued, stored by the queue (issue 25).

The receiver (traces.capture.otlp) decodes an export in the ingest pool and decides
which of its traces are kept; `spool` writes those traces' lines to
INSPECTOR_DATA_DIR/uploads/ (fsynced, under a temporary name then renamed: the upload
jobs' `receive_upload`) and `queue_export` commits a `Job` row of kind `otlp` naming the
file and queues `store_otlp_exports`. Only then is the exporter answered: a kill -9 after
the answer leaves a file and a queued job, which the queue's recovery (as its workers
start, and every minute) runs again.

The queue stores the jobs in the order they came, one at a time per process (an
export's spans of a trace must follow the previous export's): each new trace is read,
rebuilt and reported off the database and stored with the others in bulk
(traces.live.bulk); a trace already live gets its lines by `record_lines`, the live
tail's path, so its viewers see the new calls as before. OTLP_BATCH_TRACES traces go to
a transaction, and the job's row says, in that same transaction, how many of its traces
are stored (`records_parsed`): a worker killed between two batches resumes after the
last committed one, and no trace is stored twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import orjson
from django.db import connection, transaction
from django.db.models import QuerySet
from huey import crontab
from huey.contrib.djhuey import HUEY, db_periodic_task, db_task

from traces import models
from traces.capture.lines import capturing, record_lines
from traces.conf import inspector_settings
from traces.core.analysis.pricing import PriceTable
from traces.core.reading.limits import InputRejected
from traces.live.bulk import (
    PreparedLive,
    StagedLive,
    create_live_traces,
    discard_staged,
    insert_live_rows,
    prepare_live_rows,
    prepare_live_trace,
    report_live_traces,
    stage_live_traces,
)
from traces.live.idle import request_sweep
from traces.services import jobs
from traces.services.ingest import redacts
from traces.services.prices import price_table_for
from traces.stores import store
from traces.taskqueue import enqueue as queue

log = logging.getLogger(__name__)

FORMAT = "otel-genai"
OTLP_LOCK = 0x4F544C50  # "OTLP": PostgreSQL's advisory lock around a batch of traces


@dataclass(frozen=True, slots=True)
class QueuedTrace:
    """One trace of a queued export: its capture key (in its project), its name, whether
    it holds a GenAI span (else it is stored only if its trace is live by then), and its
    export as one JSON line."""

    key: str
    name: str
    genai: bool
    line: bytes


def spool(traces: list[QueuedTrace]) -> jobs.ReceivedUpload:
    """The traces written to one file, durably (no database: runs in the ingest pool). A
    JSON header line lists them; each export line follows, in order."""
    header = [{"key": t.key, "name": t.name, "genai": t.genai} for t in traces]

    def chunks() -> Iterator[bytes]:
        yield orjson.dumps({"traces": header}) + b"\n"
        for queued in traces:
            yield queued.line + b"\n"

    return jobs.receive_upload(chunks())


def read_spool(path: Path) -> list[QueuedTrace]:
    with open(path, "rb") as spooled:
        header = orjson.loads(spooled.readline())["traces"]
        return [
            QueuedTrace(t["key"], t["name"], bool(t["genai"]), spooled.readline().rstrip(b"\n"))
            for t in header
        ]


def queue_export(received: jobs.ReceivedUpload, project: models.Project, traces: int) -> None:
    """Commit the export's job row, then queue its store. Once this returns the export
    survives a kill -9 (the file is fsynced, the row committed)."""
    try:
        job = models.Job.objects.create(
            id=received.job_id,
            kind=models.Job.Kind.OTLP,
            project=project,
            filename="OTLP export",
            path=str(received.path),
            bytes_total=received.size,
            options={"traces": traces},
        )
    except BaseException:
        jobs.forget_upload(received)
        raise
    queue.enqueue(store_otlp_exports, str(job.pk))


class ExportDrain:
    """One store of queued exports at a time in this process, oldest first: a task that
    finds one running leaves its job to it (`wanted` makes the runner look again)."""

    def __init__(self) -> None:
        self.running = threading.Lock()
        self._guard = threading.Lock()
        self.wanted = False

    def clear(self) -> None:
        """Nothing to forget: the lock is held only while a store runs."""
        with self._guard:
            self.wanted = False

    def run(self) -> None:
        with self._guard:
            self.wanted = True
        while True:
            if not self.running.acquire(blocking=False):
                return  # the runner sees `wanted` once it is done
            try:
                with self._guard:
                    self.wanted = False
                _store_queued()
            finally:
                self.running.release()
            with self._guard:
                if not self.wanted:
                    return


@db_task()
def store_otlp_exports(job_id: str) -> None:
    """Store the queued OTLP exports, this one among them (`job_id` is only a hint: the
    oldest queued export goes first)."""
    store(ExportDrain).run()


REPORT_AFTER = 1000
"""New traces whose reports wait for the queue to be empty, at most: then reported."""

Created = list[tuple[models.Trace, PreparedLive, PriceTable]]
"""New traces to report, each with what it was made of and its project's prices."""


def _store_queued() -> None:
    """Every queued export, oldest first, and the new traces' reports in parts between
    them: a part (OTLP_BATCH_TRACES traces) only when no export waits, or REPORT_AFTER
    traces wait. The calls are viewable first: an export that came while the reports of
    the previous ones were being built waited for all of them (bench/otlp.py: most of
    the time between the last export's answer and its traces being viewable); now it
    waits for one part at most."""
    waiting: list[Created] = []
    try:
        while True:
            job = _next_job()
            if job is not None:
                waiting += _parts(_run(job))
                if sum(len(part) for part in waiting) >= REPORT_AFTER:
                    while waiting:
                        _report(waiting.pop(0))
            elif waiting:
                _report(waiting.pop(0))
            else:
                return
    finally:
        for part in waiting:
            _report(part)


def _parts(created: Created) -> list[Created]:
    """The traces in parts of OTLP_BATCH_TRACES, each of one project (one price table)."""
    size = max(1, int(inspector_settings()["OTLP_BATCH_TRACES"]))
    parts: list[Created] = []
    for entry in created:
        if parts and len(parts[-1]) < size and parts[-1][0][2] is entry[2]:
            parts[-1].append(entry)
        else:
            parts.append([entry])
    return parts


def _report(part: Created) -> None:
    """Store the reports of a part's new traces in one transaction, priced by its one
    project's table. Lost with a killed worker, a report is rebuilt by the trace's next
    append or its close."""
    try:
        report_live_traces([(trace, item) for trace, item, _ in part], part[0][2])
    except Exception:
        log.exception("could not store the reports of %d new OTel traces", len(part))


def _next_job() -> models.Job | None:
    while True:
        oldest = (
            models.Job.objects.filter(kind=models.Job.Kind.OTLP, state=models.Job.State.QUEUED)
            .order_by("created_at")
            .values_list("pk", flat=True)
            .first()
        )
        if oldest is None:
            return None
        job = jobs.claim(oldest)
        if job is not None:  # else another process took it
            return job


def _run(job: models.Job) -> list[tuple[models.Trace, PreparedLive, PriceTable]]:
    """Store a claimed job; the traces it created, to be reported."""
    try:
        with jobs.heartbeat(job.pk):
            return store_export(job)
    except Exception as exc:
        log.exception("queued OTLP export %s could not be stored", job.pk)
        models.Job.objects.filter(pk=job.pk).exclude(state=models.Job.State.DONE).update(
            state=models.Job.State.FAILED,
            error=f"The export could not be stored ({type(exc).__name__}).",
        )
        Path(job.path).unlink(missing_ok=True)
        return []


def store_export(job: models.Job) -> list[tuple[models.Trace, PreparedLive, PriceTable]]:
    """Store a claimed job's traces after those it stored already, OTLP_BATCH_TRACES to a
    transaction that also moves the job's count on (and marks it done with the last);
    the traces it created, with their price table, for their reports."""
    path = Path(job.path)
    rows = models.Job.objects.filter(pk=job.pk, state=models.Job.State.RUNNING)
    if not path.exists():
        rows.update(state=models.Job.State.FAILED, error="The queued export is gone.")
        return []
    traces = read_spool(path)
    request_sweep()  # a queue task: the idle traces are closed off this store
    project = job.project
    prices = price_table_for(project)
    redact_credentials = redacts(project)
    size = max(1, int(inspector_settings()["OTLP_BATCH_TRACES"]))
    done = job.records_parsed
    if done >= len(traces):
        rows.update(state=models.Job.State.DONE)
    created: list[tuple[models.Trace, PreparedLive, PriceTable]] = []
    for start in range(done, len(traces), size):
        batch = traces[start : start + size]
        live_before = capturing([t.key for t in batch])
        prepared = {
            t.key: made
            for t in batch
            if t.genai and t.key not in live_before
            if (made := _prepared(t, redact_credentials)) is not None
        }
        progress: dict[str, object] = {"records_parsed": start + len(batch)}
        if start + len(batch) >= len(traces):
            progress["state"] = models.Job.State.DONE
        try:
            made = _store_batch(batch, prepared, project, redact_credentials, rows, progress)
        except TakenOver:  # recovery gave the job to another worker, this one thought dead
            log.warning("queued OTLP export %s: taken over by another worker", job.pk)
            return created
        created += [(trace, item, prices) for trace, item in made]
    path.unlink(missing_ok=True)
    return created


class TakenOver(Exception):
    """The job is no longer this worker's: its batch is rolled back."""


def _prepared(queued: QueuedTrace, redact_credentials: bool) -> PreparedLive | None:
    try:
        return prepare_live_trace(
            key=queued.key,
            name=queued.name,
            line=queued.line,
            format_name=FORMAT,
            redact_credentials=redact_credentials,
        )
    except InputRejected as exc:
        log.warning("OTLP trace %s not stored: %s", queued.key, exc)
        return None


def _store_batch(
    batch: list[QueuedTrace],
    prepared: dict[str, PreparedLive],
    project: models.Project,
    redact_credentials: bool,
    rows: QuerySet[models.Job],
    progress: dict[str, object],
) -> list[tuple[models.Trace, PreparedLive]]:
    """One transaction: the new traces in bulk, the live ones appended, and the job's
    count of stored traces moved on (so a recovery never stores them again). The new
    traces, each with what it was made of. Their chunk objects are written, and their
    rows built, before the transaction: the receiver's job row waits for no file write,
    and the write lock is held for the INSERTs alone (bench/otlp.py: the exporter's
    answers waited for it)."""
    staged = {entry.item.key: entry for entry in stage_live_traces(list(prepared.values()))}
    used: list[StagedLive] = []
    try:
        built = prepare_live_rows(list(staged.values()), project) if staged else None
        with transaction.atomic():
            if connection.vendor == "postgresql":  # two workers never create one key twice
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_xact_lock(%s)", [OTLP_LOCK])
            live_now = capturing([t.key for t in batch])  # again, under the write lock
            for queued in batch:
                if queued.key in live_now:
                    _append(queued, project)
                elif queued.key in staged:
                    used.append(staged[queued.key])
                elif queued.genai:  # its live trace closed since: a new one after all
                    made = _prepared(queued, redact_credentials)
                    if made is not None:
                        late = stage_live_traces([made])
                        staged[made.key] = late[0]
                        used += late
            if built is not None and [entry.item.key for entry in used] == built.keys:
                traces = insert_live_rows(built)
            else:  # some became live since, or closed: the rows of those used, now
                traces = create_live_traces(used, project)
            if not rows.update(**progress):
                raise TakenOver
    except BaseException:
        discard_staged(list(staged.values()))
        raise
    kept = {entry.item.key for entry in used}
    discard_staged([entry for key, entry in staged.items() if key not in kept])
    return [(trace, entry.item) for trace, entry in zip(traces, used, strict=True)]


def _append(queued: QueuedTrace, project: models.Project) -> None:
    """A trace already live: its lines appended by the live path (its own savepoint: a
    failure leaves the others)."""
    try:
        with transaction.atomic():
            record_lines(
                key=queued.key,
                format_name=FORMAT,
                name=queued.name,
                lines=[queued.line],
                project=project,
                sweep=False,
            )
    except InputRejected as exc:
        log.warning("OTLP trace %s: spans not stored: %s", queued.key, exc)
    except Exception:
        log.exception("could not store the spans of OTel trace %s", queued.key)


OTLP_TASKS = MappingProxyType({models.Job.Kind.OTLP: store_otlp_exports})


def recover_exports(*, at_start: bool = False) -> list[str]:
    """Queue again the exports whose worker died (no heartbeat for JOB_STALE_SECONDS). At
    a process's start every queued export is queued again at once: an embedded queue lost
    its tasks with the process that was killed (a second task for a job is harmless)."""
    if at_start:
        queued = models.Job.objects.filter(
            kind=models.Job.Kind.OTLP, state=models.Job.State.QUEUED
        ).values_list("pk", flat=True)
        for job_id in list(queued)[:1]:  # one task stores them all, oldest first
            queue.enqueue(store_otlp_exports, str(job_id))
    return jobs.recover_stale_jobs(OTLP_TASKS)


@db_task()
def recover_exports_task(at_start: bool = False) -> None:
    recover_exports(at_start=at_start)


@db_periodic_task(crontab(minute="*"))
def recover_exports_every_minute() -> None:
    """Every minute, on the queue's workers: exports whose worker died are queued again."""
    recover_exports()


def recover_at_start() -> None:
    """Called as the web process starts (inspector.asgi): the embedded queue's consumer
    starts at once, so its startup hook recovers the exports a killed process left."""
    queue.start_embedded()


@HUEY.on_startup()
def _recover_on_worker_start() -> None:
    """Each queue worker thread, as it starts (embedded, or `run_huey`'s): the exports
    left queued or running by a killed process are queued again (in immediate mode,
    tests', nothing runs)."""
    if queue.immediate():
        return
    try:
        queue.enqueue(recover_exports_task, True)
        # A running export's worker is known dead only once its heartbeat is stale.
        stale = float(inspector_settings()["JOB_STALE_SECONDS"])
        queue.enqueue(recover_exports_task, False, delay=stale + 1)
    except Exception:  # the queue unreachable: the periodic recovery will do it
        log.exception("could not queue the recovery of OTLP exports")


def pending_exports() -> int:
    """Exports queued or being stored (tests and benchmarks wait for none)."""
    return models.Job.objects.filter(
        kind=models.Job.Kind.OTLP, state__in=[models.Job.State.QUEUED, models.Job.State.RUNNING]
    ).count()
