"""Durable background work, tested by kill -9 at each step (issue 26), on real processes.

A large upload goes: body over the socket (Twisted and Django buffer it) -> copied to
`uploads/<id>.partial` -> length checked, renamed `.upload` -> job row committed -> queued ->
202; then a worker claims it, ingests, stores the trace and marks the job done. Each test
here SIGKILLs the process doing one of those steps and checks what is left: no half job,
no lost upload, never two traces for one upload, the original byte-identical. A live tail
is killed between two appends. On SQLite the web process is also the queue's worker; on
PostgreSQL (with Redis) `manage.py run_huey` is (tests/hostile/deployment.py).
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from tests.hostile.deployment import STALE_SECONDS, Deployment, shared_database_url, wait_for
from tests.live.events import agent_lines, ndjson
from traces import models
from traces.models.rows import Call
from traces.services import jobs

pytestmark = pytest.mark.django_db(transaction=True)

CALLS = 300
"""Calls of the uploaded trace: ~11 MB, a second or two of ingest (time to kill it midway)."""


@pytest.fixture(scope="module")
def upload_body() -> bytes:
    return ndjson(agent_lines(CALLS))


@pytest.fixture
def deployment(tmp_path):
    running = Deployment(tmp_path)
    try:
        yield running
    finally:
        running.close()


def request(base: str, method: str, path: str, body: bytes = b"", timeout: float = 60):
    """(status, JSON) of one request; raises OSError / HTTPException when the server dies."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/x-ndjson"} if method == "POST" else {}
        conn.request(method, path, body=body or None, headers=headers)
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read() or b"null")
    finally:
        conn.close()


class Sender(threading.Thread):
    """A client posting one request in the background; `outcome` is its status or error."""

    def __init__(self, base: str, path: str, body: bytes) -> None:
        super().__init__(daemon=True)
        self.args_ = (base, "POST", path, body)
        self.outcome: object = None

    def run(self) -> None:
        try:
            self.outcome = request(*self.args_)[0]
        except (OSError, http.client.HTTPException) as exc:
            self.outcome = type(exc).__name__


def follow(deployment: Deployment, job_id, timeout: float = 60.0) -> dict:
    """The job's status once done or failed, asked of the web process (which queues a stale
    job again, as a waiting client's page would make it)."""
    deadline = time.monotonic() + timeout
    while True:
        status = request(deployment.base, "GET", f"/api/jobs/{job_id}")[1]
        if status["state"] in ("done", "failed"):
            return status
        assert time.monotonic() < deadline, (status, deployment.logs())
        time.sleep(0.1)


def sweep(deployment: Deployment) -> None:
    """The periodic sweep (`recover_stale_jobs_task`), run here once its cutoff has passed."""
    time.sleep(STALE_SECONDS + 0.3)
    with override_settings(
        INSPECTOR_DATA_DIR=deployment.folder, INSPECTOR={"JOB_STALE_SECONDS": STALE_SECONDS}
    ):
        jobs.recover_stale_jobs()


def uploads(deployment: Deployment) -> list[str]:
    folder = deployment.folder / "uploads"
    return sorted(p.suffix for p in folder.iterdir()) if folder.exists() else []


def assert_one_trace(deployment: Deployment, status: dict, data: bytes, name: str) -> None:
    """Exactly one trace for the upload, complete, its original byte-identical."""
    assert status["state"] == "done", (status, deployment.logs())
    assert [str(pk) for pk in models.Trace.objects.values_list("pk", flat=True)] == [
        status["trace"]
    ]
    trace = models.Trace.objects.get()
    assert trace.name == name and trace.calls_count == CALLS
    assert Call.objects.count() == CALLS
    parts = urlsplit(deployment.base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.request("GET", f"/traces/{trace.pk}/download")
    original = conn.getresponse().read()
    conn.close()
    assert original == data


def test_1_web_killed_while_the_body_comes_in(deployment, upload_body):
    """Killed while the socket delivers the body (nothing on disk yet), then while the body is
    copied to its `.partial` file: no job, no trace; the sweep removes the `.partial`; the
    client's retry makes exactly one trace."""
    base = deployment.start_web()
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    conn.putrequest("POST", "/api/traces?name=retried")
    conn.putheader("Content-Type", "application/x-ndjson")
    conn.putheader("Content-Length", str(len(upload_body)))
    conn.endheaders()
    conn.send(upload_body[: len(upload_body) // 2])
    time.sleep(0.3)
    deployment.kill_web()
    conn.close()
    assert uploads(deployment) == []  # Twisted buffered it: gone with the process
    assert not models.Job.objects.exists() and not models.Trace.objects.exists()

    base = deployment.start_web()
    sender = Sender(base, "/api/traces?name=retried", upload_body)
    sender.start()
    wait_for(lambda: ".partial" in uploads(deployment), "the body's .partial file")
    deployment.kill_web()
    sender.join(30)
    assert sender.outcome != 202
    assert uploads(deployment) == [".partial"]  # never renamed, so never a job
    assert not models.Job.objects.exists() and not models.Trace.objects.exists()
    sweep(deployment)
    assert uploads(deployment) == []

    deployment.start()
    status, job = request(deployment.base, "POST", "/api/traces?name=retried", upload_body)
    assert status == 202, job
    assert_one_trace(deployment, follow(deployment, job["id"]), upload_body, "retried")


def test_2_web_killed_once_the_job_row_is_committed(deployment, upload_body):
    """Killed the moment the job row exists (before or as the 202 goes out): the job is done
    later, by the queue or by recovery, once; nothing is left in uploads/."""
    base = deployment.start()
    sender = Sender(base, "/api/traces?name=committed", upload_body)
    sender.start()
    wait_for(models.Job.objects.exists, "the job row")
    deployment.kill_web()
    sender.join(30)
    job = models.Job.objects.get()
    assert job.state in (models.Job.State.QUEUED, models.Job.State.RUNNING)
    assert not models.Trace.objects.exists()
    print(f"kill after the job row: the client got {sender.outcome!r}; job {job.state}")

    deployment.start_web()
    assert_one_trace(deployment, follow(deployment, job.pk), upload_body, "committed")
    sweep(deployment)
    assert uploads(deployment) == []


def test_3_worker_killed_mid_ingest(deployment, upload_body):
    """The worker dies mid-ingest: after JOB_STALE_SECONDS the job is queued again and another
    worker finishes it: one trace, its original byte-identical."""
    deployment.start()
    status, job = request(deployment.base, "POST", "/api/traces?name=survivor", upload_body)
    assert status == 202, job
    rows = models.Job.objects.filter(pk=job["id"])
    wait_for(
        lambda: rows.filter(state=models.Job.State.RUNNING, records_parsed__gt=0).exists(),
        "the worker to be well into the ingest",
        every=0.01,
    )
    deployment.kill_worker()
    stranded = rows.get()
    assert stranded.state == models.Job.State.RUNNING and stranded.attempts == 1
    assert not models.Trace.objects.exists()

    deployment.restart_worker()
    time.sleep(STALE_SECONDS)
    assert_one_trace(deployment, follow(deployment, job["id"]), upload_body, "survivor")
    assert rows.get().attempts == 2
    assert uploads(deployment) == []


def test_4_worker_killed_after_the_trace_is_stored(deployment, upload_body):
    """The worker dies right after the trace's transaction commits: recovery must not ingest
    the upload a second time. On PostgreSQL the test holds the audit table (written just
    after the trace's commit) so the kill lands in that window every time; on SQLite it
    polls for the trace's row and kills at once."""
    deployment.start()
    status, job = request(deployment.base, "POST", "/api/traces?name=once", upload_body)
    assert status == 202, job
    rows = models.Job.objects.filter(pk=job["id"])
    holder = None
    if deployment.postgres:
        import psycopg  # the PostgreSQL pass's driver

        holder = psycopg.connect(shared_database_url())
        holder.execute("LOCK TABLE traces_auditevent IN SHARE MODE")
    try:
        wait_for(models.Trace.objects.exists, "the stored trace", timeout=60, every=0)
        deployment.kill_worker()
    finally:
        if holder is not None:
            holder.close()
    # The trace's commit is the job's: a stored trace is a done job (it was "running", with
    # no trace, before the fix, and recovery ingested the upload again: two traces).
    at_kill = rows.get()
    assert at_kill.state == models.Job.State.DONE
    assert at_kill.trace_id == models.Trace.objects.get().pk

    deployment.restart_worker()
    time.sleep(STALE_SECONDS)
    assert_one_trace(deployment, follow(deployment, job["id"]), upload_body, "once")
    sweep(deployment)
    assert uploads(deployment) == []


def test_5_live_tail_killed_between_two_appends(deployment):
    """The web process dies as a batch's append commits (its reply may never reach the
    client): the client sends that batch again at the same offset to the restarted server,
    which keeps only what it lacks; then the tail goes on. One copy of every line and call."""
    lines = agent_lines(12)
    first, second, third = lines[:20], lines[20:36], lines[36:]
    base = deployment.start_web()
    status, created = request(base, "POST", "/api/traces?live=1&name=tail")
    assert status == 201, created
    lines_path = f"/api/traces/{created['id']}/lines"
    assert request(base, "POST", f"{lines_path}?offset=0", ndjson(first)) == (
        200,
        {"total": 20, "accepted": 20},
    )
    trace = models.Trace.objects.filter(pk=created["id"])
    sender = Sender(base, f"{lines_path}?offset=20", ndjson(second))
    sender.start()
    wait_for(lambda: trace.filter(lines_total=36).exists(), "the second batch's commit")
    deployment.kill_web()
    sender.join(30)
    print(f"killed as the second append committed: the client got {sender.outcome!r}")

    base = deployment.start_web()
    status, resent = request(base, "POST", f"{lines_path}?offset=20", ndjson(second))
    assert (status, resent["total"]) == (200, 36), resent
    assert request(base, "POST", f"{lines_path}?offset=36", ndjson(third)) == (
        200,
        {"total": len(lines), "accepted": len(third)},
    )
    status, closed = request(base, "POST", f"/api/traces/{created['id']}/close")
    assert status == 200, closed
    assert (closed["total"], closed["calls"]) == (len(lines), 12)
    assert models.SourceChunk.objects.filter(trace_id=created["id"]).count() == 3
    assert Call.objects.filter(trace_id=created["id"]).count() == 12
    events = models.LiveEvent.objects.filter(trace_id=created["id"], type="call")
    assert events.count() == 12
