"""A job whose worker died mid-ingest does not stay "running" forever: without a heartbeat for
JOB_STALE_SECONDS it is queued again (its upload is still on disk) and completes; after
JOB_MAX_ATTEMPTS dead workers it fails with the reason. The queue runs tasks inline here."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone
from huey.contrib.djhuey import HUEY

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.services import jobs
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def data_dir(tmp_path):
    with override_settings(INSPECTOR_DATA_DIR=tmp_path):
        yield tmp_path


def abandoned_upload(data: bytes, *, attempts: int = 1, quiet_for: float = 3600) -> models.Job:
    """The row and file a worker leaves when it is killed mid-ingest: streamed to disk,
    claimed ("running", one attempt), its last heartbeat `quiet_for` seconds ago."""
    received = jobs.receive_upload([data], declared=len(data))
    assert received.size == len(data)
    job = jobs.new_upload_job(
        filename="loop.jsonl",
        received=received,
        options={"name": "recovered", "labels": ["night"]},
        project=models.Project.default(),
    )
    models.Job.objects.filter(pk=job.pk).update(
        state=models.Job.State.RUNNING,
        attempts=attempts,
        heartbeat_at=timezone.now() - dt.timedelta(seconds=quiet_for),
        bytes_read=len(data) // 2,
    )
    return models.Job.objects.get(pk=job.pk)


def test_a_running_job_without_heartbeat_is_queued_again_and_completes(data_dir):
    data = ndjson(agent_lines(30))
    job = abandoned_upload(data)
    assert jobs.recover_stale_jobs() == [str(job.pk)]
    job.refresh_from_db()
    assert job.state == models.Job.State.DONE, job.error
    assert job.attempts == 2
    assert job.bytes_read == job.bytes_total == len(data)
    trace = job.trace
    assert trace is not None and trace.name == "recovered" and trace.calls_count == 30
    assert list(trace.labels.values_list("name", flat=True)) == ["night"]
    assert trace.report == trace_upload(files=[("", data)], name="same").trace.report
    assert list((data_dir / "uploads").iterdir()) == []  # removed once ingested


def test_the_status_url_recovers_the_job_it_is_asked_about(client, data_dir):
    job = abandoned_upload(ndjson(agent_lines(5)))
    status = client.get(reverse("traces:api-job", args=[job.pk])).json()
    assert status["state"] == "done" and status["trace"] is not None


def test_a_job_with_a_recent_heartbeat_is_left_running(client, data_dir):
    job = abandoned_upload(ndjson(agent_lines(5)), quiet_for=5)
    assert jobs.recover_stale_jobs() == []
    status = client.get(reverse("traces:api-job", args=[job.pk])).json()
    assert status["state"] == "running"


def test_after_the_last_attempt_the_job_fails_with_the_reason(client, data_dir):
    with override_settings(INSPECTOR={"JOB_MAX_ATTEMPTS": 3}):
        job = abandoned_upload(ndjson(agent_lines(5)), attempts=3)
        assert jobs.recover_stale_jobs() == [str(job.pk)]
    status = client.get(reverse("traces:api-job", args=[job.pk])).json()
    assert status["state"] == "failed" and status["trace"] is None
    assert "stopped 3 times without finishing" in status["error"]
    assert list((data_dir / "uploads").iterdir()) == []


def test_a_queued_job_lost_with_its_queue_is_queued_again(data_dir):
    """An embedded queue lives in the web process's memory: a restart loses its tasks."""
    job = abandoned_upload(ndjson(agent_lines(5)), attempts=0)
    models.Job.objects.filter(pk=job.pk).update(state=models.Job.State.QUEUED)
    assert jobs.recover_stale_jobs() == [str(job.pk)]
    job.refresh_from_db()
    assert job.state == models.Job.State.DONE and job.attempts == 1


def test_a_recovered_job_whose_file_is_gone_says_so(data_dir):
    job = abandoned_upload(ndjson(agent_lines(5)))
    (data_dir / "uploads" / f"{job.pk}.upload").unlink()
    jobs.recover_stale_jobs()
    job.refresh_from_db()
    assert job.state == models.Job.State.FAILED
    assert job.error == "The uploaded file is no longer on the server; upload it again."


def test_a_reanalysis_left_running_is_run_again(data_dir):
    trace = trace_upload(files=[("", ndjson(agent_lines(5)))], name="stored").trace
    job = models.Job.objects.create(
        kind=models.Job.Kind.REANALYZE,
        project=trace.project,
        trace=trace,
        state=models.Job.State.RUNNING,
        attempts=1,
        heartbeat_at=timezone.now() - dt.timedelta(hours=1),
    )
    assert jobs.recover_stale_jobs() == [str(job.pk)]
    job.refresh_from_db()
    assert job.state == models.Job.State.DONE and job.calls_rebuilt == 5


def test_a_running_job_writes_its_heartbeat(data_dir):
    job = abandoned_upload(ndjson(agent_lines(5)))
    before = job.heartbeat_at
    beaten = models.Job.objects.filter(
        pk=job.pk, heartbeat_at__gt=before + dt.timedelta(minutes=59)
    )
    with override_settings(INSPECTOR={"JOB_STALE_SECONDS": 0.2}), jobs.heartbeat(job.pk):
        deadline = time.monotonic() + 10  # it beats every 0.05 s: waits for the first
        while not beaten.exists():
            assert time.monotonic() < deadline, "the running job wrote no heartbeat"
            time.sleep(0.01)
    job.refresh_from_db()
    assert job.heartbeat_at > before + dt.timedelta(minutes=59)


def test_the_sweep_runs_every_minute_on_the_workers():
    due = {task.name for task in HUEY.read_periodic(dt.datetime.now())}
    assert any(name.endswith("recover_stale_jobs_task") for name in due)


def test_the_idle_sweep_runs_every_minute_on_the_workers():
    """Issue 26: the sweep ran inside whichever request triggered it (90.5 s once)."""
    due = {task.name for task in HUEY.read_periodic(dt.datetime.now())}
    assert any(name.endswith("sweep_idle_every_minute") for name in due)


def test_sweeps_asked_for_by_a_flood_of_requests_are_queued_once():
    from traces.live.idle import SWEEP_EVERY, SweepRequests

    requests = SweepRequests()
    assert requests.due(100.0)
    assert not any(requests.due(100.0 + n / 10) for n in range(1, 50))
    assert requests.due(100.0 + SWEEP_EVERY)


def test_a_worker_thought_dead_does_not_store_a_second_trace(data_dir):
    """Two workers on one job (the first only slow, its heartbeat late): the second to store
    finds the job done in its own transaction and rolls its trace back."""
    data = ndjson(agent_lines(5))
    job = abandoned_upload(data)
    first = jobs.run_upload(job)
    with pytest.raises(jobs.AlreadyDone):
        jobs.run_upload(job)
    assert list(models.Trace.objects.values_list("pk", flat=True)) == [first.pk]
    job.refresh_from_db()
    assert job.state == models.Job.State.DONE and job.trace_id == first.pk
    assert models.SourceChunk.objects.count() == 1  # the second's rows went with it


def test_the_sweep_removes_bodies_no_unfinished_job_reads(data_dir):
    """A worker killed after its trace's commit leaves its `.upload`; one killed between the
    rename and the job row leaves one without a row. The sweep removes both once older than
    JOB_STALE_SECONDS, and keeps the body of a job still to run."""
    done = abandoned_upload(ndjson(agent_lines(5)), quiet_for=1)
    jobs.run_upload(done)  # stored and done; the body stays, as after a kill
    orphan = jobs.receive_upload([b"{}\n" * 10], declared=30).path
    waiting = abandoned_upload(ndjson(agent_lines(5)), quiet_for=1)
    old = time.time() - 3600
    for body in (Path(done.path), orphan, Path(waiting.path)):
        os.utime(body, (old, old))
    jobs.recover_stale_jobs()
    assert sorted((data_dir / "uploads").iterdir()) == [Path(waiting.path)]
