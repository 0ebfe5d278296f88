"""The API's three ways in, each an endpoint of its own: `POST /api/traces` (ingest),
`POST /api/traces/live` (an empty live trace), `POST /api/jobs` (a background upload);
and the older query forms of `/api/traces` answering exactly as the endpoints they alias.

Every upload, whichever way it came, is stored and audited by one service
(`traces.services.upload`): the audit rows below are its one `trace.upload` each.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db(transaction=True)

THRESHOLD = 4096


@pytest.fixture
def background(tmp_path):
    """Uploads over 4 KB to /api/traces go to the background; job files in a fresh folder."""
    with override_settings(
        INSPECTOR={"BACKGROUND_UPLOAD_BYTES": THRESHOLD}, INSPECTOR_DATA_DIR=tmp_path
    ):
        yield tmp_path


def test_the_new_endpoints_have_their_own_urls():
    assert reverse("traces:api-live") == "/api/traces/live"
    assert reverse("traces:api-jobs") == "/api/jobs"
    assert reverse("traces:api-traces") == "/api/traces"


def test_live_endpoint_creates_an_empty_live_trace(client):
    client.handler.enforce_csrf_checks = True  # scripts send no token
    reply = client.post(reverse("traces:api-live") + "?name=agent-9&format=loop-inspector")
    assert reply.status_code == 201, reply.content
    body = reply.json()
    assert set(body) == {"id", "url", "lines_url", "state"} and body["state"] == "live"
    assert body["lines_url"].endswith(reverse("live:lines", args=[body["id"]]))
    trace = models.Trace.objects.get(pk=body["id"])
    assert (trace.name, trace.state, trace.lines_total) == ("agent-9", "live", 0)
    assert models.AuditEvent.objects.filter(action="trace.live").count() == 1


def test_live_endpoint_and_its_alias_answer_alike(client):
    new = client.post(reverse("traces:api-live") + "?name=same").json()
    old = client.post(reverse("traces:api-traces") + "?live=1&name=same").json()
    assert set(new) == set(old)
    assert new["state"] == old["state"] == "live"
    names = models.Trace.objects.filter(pk__in=[new["id"], old["id"]]).values_list("name")
    assert sorted(names) == [("same",), ("same",)]


def test_live_endpoint_refuses_lines_in_its_own_words(client):
    lines = ndjson(agent_lines(1))
    new = client.post(reverse("traces:api-live"), lines, content_type="application/x-ndjson")
    assert new.status_code == 400
    assert new.json()["error"].startswith("POST /api/traces/live creates an empty live trace")
    assert "POST it to /api/traces." in new.json()["error"]
    old = client.post(
        reverse("traces:api-traces") + "?live=1", lines, content_type="application/x-ndjson"
    )
    assert old.status_code == 400
    assert old.json()["error"].startswith("?live=1 creates an empty live trace")
    assert old.json()["error"].endswith("To upload a whole file, leave out ?live=1.")
    assert not models.Trace.objects.exists()


def test_live_endpoint_takes_only_post(client):
    assert client.get(reverse("traces:api-live")).status_code == 405


def test_jobs_endpoint_takes_a_small_upload_as_a_job(client):
    data = ndjson(agent_lines(3))
    assert len(data) < THRESHOLD
    reply = client.post(
        reverse("traces:api-jobs") + "?name=queued&labels=night",
        data,
        content_type="application/x-ndjson",
    )
    assert reply.status_code == 202, reply.content
    job = reply.json()
    assert reply["Location"] == job["status_url"]
    assert job["status_url"].endswith(reverse("traces:api-job", args=[job["id"]]))
    status = client.get(job["status_url"]).json()  # the queue runs inline in tests
    assert status["state"] == "done", status
    trace = models.Trace.objects.get(pk=status["trace"])
    assert (trace.name, trace.calls_count) == ("queued", 3)
    assert list(trace.labels.values_list("name", flat=True)) == ["night"]
    assert trace.report == trace_upload(files=[("", data)], name="direct").trace.report
    audit = models.AuditEvent.objects.get(action="trace.upload")
    assert audit.target == f"queued ({trace.pk})" and audit.actor == "local user"


def test_jobs_endpoint_takes_a_multipart_file(client, tmp_path):
    data = ndjson(agent_lines(2))
    with override_settings(INSPECTOR_DATA_DIR=tmp_path):
        reply = client.post(
            reverse("traces:api-jobs"), {"file": SimpleUploadedFile("run.jsonl", data)}
        )
        assert reply.status_code == 202, reply.content
        status = client.get(reply.json()["status_url"]).json()
    assert status["state"] == "done" and status["filename"] == "run.jsonl"
    assert list((tmp_path / "uploads").iterdir()) == []  # the streamed file is gone


def test_jobs_endpoint_refuses_what_a_job_does_not_take(client):
    data = ndjson(agent_lines(2))
    two = client.post(
        reverse("traces:api-jobs"),
        {"file": [SimpleUploadedFile("a.jsonl", data), SimpleUploadedFile("b.jsonl", data)]},
    )
    assert two.status_code == 400 and "one trace file" in two.json()["error"]
    in_set = client.post(
        reverse("traces:api-jobs") + "?set=nightly", data, content_type="application/x-ndjson"
    )
    assert in_set.status_code == 400 and "POST /api/traces" in in_set.json()["error"]
    assert not models.Job.objects.exists() and not models.Trace.objects.exists()


def test_jobs_endpoint_keeps_the_size_limit(client):
    with override_settings(INSPECTOR={"MAX_UPLOAD_BYTES": 100}):
        reply = client.post(
            reverse("traces:api-jobs"), ndjson(agent_lines(5)), content_type="text/plain"
        )
    assert reply.status_code == 413 and "limit is 100" in reply.json()["error"]
    assert not models.Job.objects.exists()


def test_a_large_body_to_the_traces_endpoint_is_still_a_job(client, background):
    data = ndjson(agent_lines(40))
    assert len(data) > THRESHOLD
    old = client.post(
        reverse("traces:api-traces") + "?name=big", data, content_type="application/x-ndjson"
    )
    new = client.post(
        reverse("traces:api-jobs") + "?name=big", data, content_type="application/x-ndjson"
    )
    assert old.status_code == new.status_code == 202
    assert set(old.json()) == set(new.json())
    traces = [client.get(reply.json()["status_url"]).json()["trace"] for reply in (old, new)]
    first, second = (models.Trace.objects.get(pk=pk) for pk in traces)
    assert first.report == second.report and first.calls_count == 40


def test_a_small_body_to_the_traces_endpoint_is_ingested_at_once(client, background):
    reply = client.post(
        reverse("traces:api-traces") + "?name=small",
        ndjson(agent_lines(2)),
        content_type="application/x-ndjson",
    )
    assert reply.status_code == 201, reply.content
    body = reply.json()
    assert set(body) == {"id", "url", "format", "calls", "line_errors", "labels"}
    assert body["calls"] == 2 and not models.Job.objects.exists()


def test_every_way_in_audits_one_upload_per_trace(client):
    data = ndjson(agent_lines(2))
    client.post(reverse("traces:api-traces") + "?name=api", data, content_type="text/plain")
    client.post(reverse("traces:upload"), {"file": SimpleUploadedFile("form.jsonl", data)})
    client.post(
        reverse("traces:api-sets"),
        {"name": "nightly", "file": [SimpleUploadedFile("s1.jsonl", data + b"\n")]},
    )
    stored = models.Trace.objects.order_by("created_at")
    assert [trace.name for trace in stored] == ["api", "form.jsonl", "s1.jsonl"]
    targets = set(
        models.AuditEvent.objects.filter(action="trace.upload").values_list("target", flat=True)
    )
    assert targets == {f"{trace.name} ({trace.pk})" for trace in stored}
