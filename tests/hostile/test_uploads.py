"""Every hostile input through the JSON API (multipart and raw body) and the upload form:
never a 500, a clear message, and either nothing stored or the original kept whole."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.hostile.cases import Case, cases
from traces import models

pytestmark = pytest.mark.django_db

CASES = cases()
IDS = [case.id for case in CASES]


def send(client, case: Case, way: str):
    if way == "multipart":
        return client.post(
            reverse("traces:api-traces"), {"file": SimpleUploadedFile(case.filename, case.data)}
        )
    if way == "raw":
        return client.post(
            reverse("traces:api-traces") + f"?filename={case.filename}",
            data=case.data,
            content_type="application/octet-stream",
        )
    return client.post(
        reverse("traces:upload"), {"file": SimpleUploadedFile(case.filename, case.data)}
    )


def settled(client, reply) -> tuple[int, dict]:
    """The answer, with a 202 (a large upload, ingested in the background) followed to its
    end and told as the synchronous path tells it: 400 and the job's error, or 201."""
    if reply.status_code != 202:
        return reply.status_code, reply.json()
    job = client.get(reply.json()["status_url"]).json()
    if job["state"] == "failed":
        return 400, {"error": job["error"]}
    assert job["state"] == "done", job
    trace = models.Trace.objects.get(pk=job["trace"])
    return 201, {
        "id": job["trace"],
        "calls": job["calls_rebuilt"],
        "line_errors": trace.report["lines"]["errors"],
    }


def stored_bytes(client, trace_id) -> bytes:
    return client.get(reverse("traces:download", args=[trace_id])).content


@pytest.mark.parametrize("way", ["multipart", "raw"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_api_answers_every_hostile_input(client, case, way):
    before = models.Trace.objects.count()
    status, body = settled(client, send(client, case, way))
    assert status < 500
    if case.outcome == "refused":
        assert status == 400
        assert case.says in body["error"]
        assert models.Trace.objects.count() == before  # nothing half-stored
        return
    assert status == 201, body
    messages = " ".join(error["message"] for error in body["line_errors"])
    assert case.says in messages
    assert stored_bytes(client, body["id"]) == case.data  # the original, byte-identical
    trace = models.Trace.objects.get(pk=body["id"])
    assert trace.calls.count() == body["calls"] >= 1
    for page in ("traces:detail", "traces:postmortem", "traces:export-md", "traces:export-html"):
        assert client.get(reverse(page, args=[trace.pk])).status_code == 200
    assert client.get(reverse("traces:call", args=[trace.pk, 1])).status_code == 200


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_upload_form_answers_every_hostile_input(client, case):
    before = models.Trace.objects.count()
    reply = send(client, case, "form")
    assert reply.status_code < 500
    if case.outcome == "refused":
        assert reply.status_code == 400
        page = reply.content.decode()
        assert case.says.replace("'", "&#x27;") in page
        assert models.Trace.objects.count() == before
    else:
        assert reply.status_code == 302
        trace = models.Trace.objects.order_by("-created_at").first()
        assert stored_bytes(client, trace.pk) == case.data
