"""The queue across processes: `manage.py run_huey` workers on Redis and PostgreSQL do the work.

Skipped unless REDIS_URL and a PostgreSQL DATABASE_URL are set (.ci/run's second pass):
a worker process needs a database it can share with this test and a queue in Redis.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings
from django.urls import reverse
from huey.contrib.djhuey import HUEY

from tests.live.events import agent_lines, ndjson
from tests.live.servers import ROOT, server_env
from traces import live, models

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not os.environ.get("REDIS_URL")
        or not os.environ.get("DATABASE_URL", "").startswith("postgres"),
        reason="needs REDIS_URL and DATABASE_URL pointing at PostgreSQL (.ci/run's second pass):"
        " a worker process shares the queue and the test database with this one",
    ),
]


def shared_database_url() -> str:
    """The URL of the test database pytest-django created (the worker must use it)."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return (
        f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )


@contextmanager
def worker_process(tmp_path, log_name: str = "worker.log", **env_vars: str):
    """`manage.py run_huey` with two thread workers, on this test's queue and database;
    the tasks queued here while it runs go to Redis (immediate mode off)."""
    env = server_env(
        DATABASE_URL=shared_database_url(),
        INSPECTOR_QUEUE="redis",
        INSPECTOR_QUEUE_NAME=HUEY.name,
        INSPECTOR_DATA_DIR=str(tmp_path),
        **env_vars,
    )
    command = [sys.executable, "manage.py", "run_huey", "--workers", "2", "--worker-type", "thread"]
    with open(tmp_path / log_name, "wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        HUEY.immediate = False
        HUEY.storage.flush_queue()
        try:
            yield process
        finally:
            HUEY.immediate = True
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


def follow(client, status_url: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(status_url).json()
        if status["state"] in ("done", "failed"):
            return status
        time.sleep(0.1)
    raise AssertionError(f"the job did not finish in {timeout} s: {status}")


def test_a_worker_process_ingests_a_large_upload_and_refreshes_live_reports(client, tmp_path):
    assert settings.INSPECTOR_QUEUE == "redis"
    with (
        override_settings(
            INSPECTOR={"BACKGROUND_UPLOAD_BYTES": 4096, "LIVE_REPORT_INTERVAL": 0.3},
            INSPECTOR_DATA_DIR=tmp_path,
            # The worker stores and reads originals where this process does: its
            # INSPECTOR_DATA_DIR is this folder too.
            STORAGES={
                **settings.STORAGES,
                "default": {
                    "BACKEND": "django.core.files.storage.FileSystemStorage",
                    "OPTIONS": {"location": str(tmp_path), "allow_overwrite": True},
                },
            },
        ),
        worker_process(tmp_path) as process,
    ):
        data = ndjson(agent_lines(200))
        reply = client.post(
            reverse("traces:api-traces") + "?name=queued",
            data=data,
            content_type="application/x-ndjson",
        )
        assert reply.status_code == 202
        assert reply.json()["state"] == "queued"  # nobody in this process ran it
        status = follow(client, reply.json()["status_url"])
        assert status["state"] == "done", (status, (tmp_path / "worker.log").read_text())
        trace = models.Trace.objects.get(pk=status["trace"])
        assert trace.calls_count == status["calls_rebuilt"] == 200
        assert status["bytes_read"] == len(data)

        # A busy live trace: the worker refreshes its report, coalesced, and once more
        # after the last batch.
        lines = agent_lines(30)
        live_trace = live.create_live_trace(name="live, worker")
        sent = 0
        while sent < len(lines):
            batch = lines[sent : sent + 5]
            live.append_lines(trace_id=live_trace.pk, offset=sent, lines=batch)
            sent += len(batch)
        assert live.wait_for_reports(60), (tmp_path / "worker.log").read_text()
        assert process.poll() is None
    live_trace.refresh_from_db()
    assert live_trace.report_lines == live_trace.lines_total == len(lines)
    assert len(live_trace.report["calls"]) == 30
    refreshes = models.LiveEvent.objects.filter(trace=live_trace, type="state").count()
    assert 1 <= refreshes < (len(lines) + 4) // 5


def test_a_job_whose_worker_is_killed_mid_ingest_completes_on_another(client, tmp_path):
    """kill -9 the worker while it ingests; the job's heartbeat stops, the status URL finds
    it stale (JOB_STALE_SECONDS = 2 here) and queues it again; a new worker completes it."""
    storage = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path), "allow_overwrite": True},
        },
    }
    data = ndjson(agent_lines(600))  # ~40 MB: seconds of work, time to kill it midway
    settings_module = {"DJANGO_SETTINGS_MODULE": "tests.jobs.recovery_settings"}
    with override_settings(
        INSPECTOR={"BACKGROUND_UPLOAD_BYTES": 4096, "JOB_STALE_SECONDS": 2},
        INSPECTOR_DATA_DIR=tmp_path,
        STORAGES=storage,
    ):
        with worker_process(tmp_path, "first.log", **settings_module) as first:
            reply = client.post(
                reverse("traces:api-traces") + "?name=survivor",
                data=data,
                content_type="application/x-ndjson",
            )
            assert reply.status_code == 202
            job = models.Job.objects.filter(pk=reply.json()["id"])
            deadline = time.monotonic() + 60
            # Well into the ingest: the worker has told of records parsed.
            while not job.filter(state=models.Job.State.RUNNING, records_parsed__gt=0).exists():
                assert time.monotonic() < deadline, (tmp_path / "first.log").read_text()
                time.sleep(0.05)
            first.kill()
            first.wait(10)
        stranded = job.get()
        assert stranded.state == models.Job.State.RUNNING and stranded.attempts == 1
        assert stranded.trace_id is None
        with worker_process(tmp_path, "second.log", **settings_module):
            status = follow(client, reply.json()["status_url"], timeout=120)
        assert status["state"] == "done", (status, (tmp_path / "second.log").read_text())
    done = job.get()
    assert done.attempts == 2
    trace = models.Trace.objects.get(pk=status["trace"])
    assert trace.name == "survivor" and trace.calls_count == status["calls_rebuilt"] == 600
    assert models.Trace.objects.filter(name="survivor").count() == 1
