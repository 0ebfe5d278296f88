"""Large uploads as background jobs: 202, a status URL, progress, the trace when done; failures with
their reason. The queue runs tasks inline here (Huey's immediate mode, set in tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test import override_settings
from django.urls import reverse

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.core.analysis import ingest
from traces.services import jobs
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db(transaction=True)

THRESHOLD = 4096


@pytest.fixture
def background(tmp_path):
    """Uploads over 4 KB go to the background; their files under a fresh data folder."""
    with override_settings(
        INSPECTOR={"BACKGROUND_UPLOAD_BYTES": THRESHOLD}, INSPECTOR_DATA_DIR=tmp_path
    ):
        yield tmp_path


def post_raw(client, data: bytes, **query):
    url = reverse("traces:api-traces")
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    return client.post(url, data=data, content_type="application/x-ndjson")


def test_a_large_raw_upload_answers_202_and_its_job_ends_with_the_trace(client, background):
    data = ndjson(agent_lines(40))
    assert len(data) > THRESHOLD
    reply = post_raw(client, data, name="big", labels="night")
    assert reply.status_code == 202, reply.content
    job = reply.json()
    assert job["status_url"].endswith(reverse("traces:api-job", args=[job["id"]]))
    assert reply["Location"] == job["status_url"]

    status = client.get(reverse("traces:api-job", args=[job["id"]])).json()
    assert status["state"] == "done", status
    assert status["error"] is None
    assert status["bytes_read"] == status["bytes_total"] == len(data)
    trace = models.Trace.objects.get(pk=status["trace"])
    assert status["url"].endswith(reverse("traces:detail", args=[trace.pk]))
    assert status["calls_rebuilt"] == trace.calls_count == 40
    assert status["records_parsed"] == trace.records_ingested
    assert trace.name == "big"
    assert list(trace.labels.values_list("name", flat=True)) == ["night"]

    # The same rows and report as the synchronous path, and the original kept whole.
    same = trace_upload(files=[("", data)], name="small way").trace
    assert trace.report == same.report
    assert client.get(reverse("traces:download", args=[trace.pk])).content == data
    # The streamed file is gone once ingested.
    assert list((background / "uploads").iterdir()) == []


def test_a_large_multipart_upload_goes_to_the_background_too(client, background):
    data = ndjson(agent_lines(40))
    from django.core.files.uploadedfile import SimpleUploadedFile

    reply = client.post(
        reverse("traces:api-traces"),
        {"file": SimpleUploadedFile("loop.jsonl", data), "format": "loop-inspector"},
    )
    assert reply.status_code == 202, reply.content
    status = client.get(reply.json()["status_url"]).json()
    assert status["state"] == "done" and status["filename"] == "loop.jsonl"
    assert models.Trace.objects.get(pk=status["trace"]).source_filename == "loop.jsonl"


def test_small_uploads_stay_synchronous(client, background):
    data = ndjson(agent_lines(2))
    assert len(data) < THRESHOLD
    reply = post_raw(client, data)
    assert reply.status_code == 201
    assert not models.Job.objects.exists()


def test_a_failed_background_upload_says_why(client, background):
    data = b'{"hello": "world"}\n' * 400
    assert len(data) > THRESHOLD
    reply = post_raw(client, data, filename="notes.jsonl")
    assert reply.status_code == 202
    status = client.get(reply.json()["status_url"]).json()
    assert status["state"] == "failed"
    assert status["error"].startswith("notes.jsonl: ")
    assert status["trace"] is None and status["url"] is None
    assert list((background / "uploads").iterdir()) == []


def test_an_unknown_job_is_404(client):
    import uuid

    reply = client.get(reverse("traces:api-job", args=[uuid.uuid4()]))
    assert reply.status_code == 404
    assert reply.json() == {"error": "No such job."}


def test_ingest_reports_progress_while_it_reads(monkeypatch):
    """The core tells records read and calls rebuilt as it goes, then the final counts."""
    monkeypatch.setattr(ingest, "PROGRESS_EVERY", 0.0)
    told: list[tuple[int, int]] = []
    core = ingest.analyze_bytes(
        ndjson(agent_lines(300)), progress=lambda records, calls: told.append((records, calls))
    )
    assert len(told) >= 3
    assert told == sorted(told)  # never backwards
    assert told[0][1] < told[-1][1]
    assert told[-1] == (core.records_ingested, len(core.calls))


def test_reanalysis_runs_as_a_job(tmp_path):
    trace = trace_upload(files=[("", ndjson(agent_lines(5)))], name="again").trace
    models.Call.objects.filter(trace=trace).delete()
    job = jobs.queue_reanalysis(trace)
    job.refresh_from_db()
    assert job.state == "done", job.error
    assert job.calls_rebuilt == 5
    assert models.Call.objects.filter(trace=trace).count() == 5


def test_the_streamed_file_lives_under_the_data_dir(background):
    project = models.Project.default()
    received = jobs.receive_upload(iter([b"ab", b"cd"]), declared=4)
    job = jobs.new_upload_job(filename="x.jsonl", received=received, options={}, project=project)
    assert Path(job.path).parent == background / "uploads"
    assert received.size == 4
    assert Path(job.path).read_bytes() == b"abcd"


def test_a_body_shorter_than_declared_makes_no_job_and_leaves_no_file(background):
    """Issue 26: a body cut short (the web process killed while writing it, the client
    gone) was queued and ingested as done. Now nothing is queued: the client retries."""
    with pytest.raises(jobs.IncompleteUpload, match="after 4 of its 10 bytes"):
        jobs.receive_upload(iter([b"ab", b"cd"]), declared=10)
    assert not models.Job.objects.exists()
    assert list((background / "uploads").iterdir()) == []


def test_a_process_killed_while_writing_leaves_only_a_partial_file(background):
    def dies_midway():
        yield b"{}\n"
        raise KeyboardInterrupt  # what a kill looks like from inside the write loop

    with pytest.raises(KeyboardInterrupt):
        jobs.receive_upload(dies_midway(), declared=100)
    assert not models.Job.objects.exists()
    assert not any(path.suffix == ".upload" for path in (background / "uploads").iterdir())
    stale = background / "uploads" / "left-by-a-killed-process.partial"
    stale.write_bytes(b"{}")
    os.utime(stale, (0, 0))
    jobs.recover_stale_jobs()
    assert not stale.exists()


def test_a_job_whose_file_is_short_fails_with_the_reason(background):
    data = ndjson(agent_lines(10))
    received = jobs.receive_upload([data], declared=len(data))
    job = jobs.new_upload_job(
        filename="cut.jsonl", received=received, options={}, project=models.Project.default()
    )
    Path(job.path).write_bytes(data[: len(data) // 2])  # the disk lost its tail
    jobs.queue_upload_job(job)
    job.refresh_from_db()
    assert job.state == models.Job.State.FAILED
    assert f"has {len(data) // 2:,} of its {len(data):,} bytes" in job.error
    assert not models.Trace.objects.exists()
