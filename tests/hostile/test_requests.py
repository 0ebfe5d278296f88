"""Clumsy requests: HEAD, odd download names and indexes, too many files, a body sent to
`?live=1`, curl's default content type, and credentials in every recorded shape."""

from __future__ import annotations

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.core.builders import log, pair, response, user
from tests.hostile import inputs
from traces import models
from traces.core.reading.sample import sample_bytes

pytestmark = pytest.mark.django_db


def upload(client, data: bytes, filename: str = "trace.jsonl", **fields) -> models.Trace:
    reply = client.post(
        reverse("traces:api-traces"), {"file": SimpleUploadedFile(filename, data), **fields}
    )
    assert reply.status_code == 201, reply.content
    return models.Trace.objects.get(pk=reply.json()["id"])


def test_every_page_and_api_read_answers_head(client):
    trace = upload(client, sample_bytes())
    urls = [
        reverse("traces:list"),
        reverse("traces:detail", args=[trace.pk]),
        reverse("traces:call", args=[trace.pk, 1]),
        reverse("traces:call-request", args=[trace.pk, 1]),
        reverse("traces:diagram-json", args=[trace.pk]),
        reverse("traces:download", args=[trace.pk]),
        reverse("traces:postmortem", args=[trace.pk]),
        reverse("traces:export-md", args=[trace.pk]),
        reverse("traces:export-html", args=[trace.pk]),
        reverse("traces:api-trace", args=[trace.pk]),
        reverse("live:lines", args=[trace.pk]),
        "/rules/",
    ]
    for url in urls:
        reply = client.head(url)
        assert reply.status_code == 200, url
        assert reply.content == b"", url


def test_a_download_name_with_cr_lf_is_sanitised(client):
    trace = upload(client, sample_bytes(), filename="evil\r\nSet-Cookie: x=1.jsonl")
    reply = client.get(reverse("traces:download", args=[trace.pk]))
    assert reply.status_code == 200
    assert reply.content == sample_bytes()
    disposition = reply["Content-Disposition"]
    assert "\r" not in disposition and "\n" not in disposition
    assert disposition.startswith('attachment; filename="evil')


@pytest.mark.parametrize("wanted", ["-1", "2", "x", "", "1e3"])
def test_a_file_index_out_of_range_is_404(client, wanted):
    files = [
        SimpleUploadedFile("a.jsonl", sample_bytes()),
        SimpleUploadedFile("b.jsonl", sample_bytes()),
    ]
    reply = client.post(reverse("traces:api-traces"), {"file": files})
    assert reply.status_code == 201
    url = reverse("traces:download", args=[reply.json()["id"]])
    assert client.get(f"{url}?file=1").content == sample_bytes()
    assert client.get(f"{url}?file={wanted}").status_code == 404


def test_more_than_100_files_get_a_json_answer(client):
    files = [SimpleUploadedFile(f"{n}.jsonl", sample_bytes()) for n in range(101)]
    reply = client.post(reverse("traces:api-traces"), {"file": files})
    assert reply.status_code == 400
    assert reply["Content-Type"] == "application/json"
    assert "at most 100" in reply.json()["error"]
    assert not models.Trace.objects.exists()


def test_live_with_a_body_says_how_instead_of_dropping_it(client):
    reply = client.post(
        reverse("traces:api-traces") + "?live=1",
        data=sample_bytes(),
        content_type="application/x-ndjson",
    )
    assert reply.status_code == 400
    assert "lines_url" in reply.json()["error"]
    assert not models.Trace.objects.exists()
    named = client.post(reverse("traces:api-traces") + "?live=1", {"name": "form field"})
    assert named.status_code == 201
    assert models.Trace.objects.get().name == "form field"


def test_curl_data_binary_default_content_type_is_read_as_the_trace(client):
    reply = client.post(
        reverse("traces:api-traces") + "?name=curl",
        data=sample_bytes(),
        content_type="application/x-www-form-urlencoded",
    )
    assert reply.status_code == 201, reply.content
    assert reply.json()["calls"] == 4


SECRETS = ["AIzaSECRET1", "helicone-SECRET2", "litellm-SECRET3", "har-SECRET4", "otel-SECRET5"]


def test_credentials_are_masked_in_every_shape_on_the_call_page(client):
    first = orjson.loads(pair([user("hi")], response([{"type": "text", "text": "ok"}], "end_turn")))
    record = {
        "request": {
            "method": "POST",
            "url": f"https://generativelanguage.googleapis.com/v1beta/models/x:generate?key={SECRETS[0]}&alt=sse",
            "headers": {
                "x-goog-api-key": SECRETS[0],
                "helicone-auth": f"Bearer {SECRETS[1]}",
                "x-litellm-api-key": SECRETS[2],
                "content-type": "application/json",
            },
            "body": first["request"],
        },
        "response": {
            "status_code": 200,
            "headers": [
                {"name": "set-cookie", "value": SECRETS[3]},
                {"name": "x-request-id", "value": "req-1"},
            ],
            "body": first["response"],
        },
        "attributes": {"http.request.header.x-api-key": [SECRETS[4]]},
    }
    trace = upload(client, log(orjson.dumps(record)))
    page = client.get(reverse("traces:call", args=[trace.pk, 1])).content.decode()
    for secret in SECRETS:
        assert secret not in page
    assert "[masked]" in page
    assert "req-1" in page  # other headers are shown
    assert upload and client.get(reverse("traces:download", args=[trace.pk])).content == log(
        orjson.dumps(record)
    )


def test_an_oversized_trace_is_refused_with_the_limit_in_the_message(client, settings):
    settings.INSPECTOR = {"MAX_UPLOAD_BYTES": 1000}
    reply = client.post(
        reverse("traces:api-traces"),
        data=inputs.with_text("x" * 2000),
        content_type="application/x-ndjson",
    )
    assert reply.status_code == 400
    assert "the limit is 1,000" in reply.json()["error"]


def test_a_raw_body_over_djangos_own_limit_gets_a_json_413(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    reply = client.post(
        reverse("traces:api-traces"), data=b"x" * 2000, content_type="application/x-ndjson"
    )
    assert reply.status_code == 413
    assert "1,000-byte limit" in reply.json()["error"]


def test_the_upload_form_still_checks_csrf(client):
    client.handler.enforce_csrf_checks = True
    reply = client.post(
        reverse("traces:upload"), {"file": SimpleUploadedFile("s.jsonl", sample_bytes())}
    )
    assert reply.status_code == 403
    assert not models.Trace.objects.exists()
    client.get(reverse("traces:list"))  # the page's form sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    reply = client.post(
        reverse("traces:upload"),
        {"file": SimpleUploadedFile("s.jsonl", sample_bytes()), "csrfmiddlewaretoken": token},
    )
    assert reply.status_code == 302
