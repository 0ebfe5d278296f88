"""The web shell: uploads, the JSON API, pages, downloads and escaping."""

from __future__ import annotations

import gzip

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces import models
from traces.core.reading.sample import sample_bytes

pytestmark = pytest.mark.django_db

HOSTILE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


def hostile_log() -> bytes:
    q = [user(HOSTILE)]
    r1 = response([{"type": "text", "text": HOSTILE}, tool_use("t1", path=HOSTILE)], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    results = {"role": "user", "content": [tool_result("t1", HOSTILE, True)]}
    r2 = response([{"type": "text", "text": "done"}], "end_turn")
    return log(pair(q, r1, system=HOSTILE), pair([*q, echo, results], r2, system=HOSTILE))


def upload(client, data: bytes, name: str = "trace.jsonl", **fields):
    return client.post(
        reverse("traces:api-traces"),
        {"file": SimpleUploadedFile(name, data), **fields},
    )


def test_api_upload_multipart_returns_the_new_trace(client):
    reply = upload(client, sample_bytes(), "calendar.jsonl")
    assert reply.status_code == 201
    body = reply.json()
    assert body["format"] == "anthropic-messages"
    assert body["calls"] == 4
    assert body["line_errors"] == []
    assert body["url"].endswith(f"/traces/{body['id']}/")
    report = client.get(reverse("traces:api-trace", args=[body["id"]])).json()
    assert report["schema"] == "loop-inspector/report/v1"
    assert [c["input_tokens"] for c in report["calls"]] == [800, 1260, 1980, 2120]
    assert report["totals"]["tool_runs"] == 4


def test_api_upload_raw_ndjson_body_without_csrf(client):
    client.handler.enforce_csrf_checks = True
    reply = client.post(
        reverse("traces:api-traces") + "?name=raw",
        data=sample_bytes(),
        content_type="application/x-ndjson",
    )
    assert reply.status_code == 201
    assert models.Trace.objects.get(pk=reply.json()["id"]).name == "raw"


def test_api_reports_line_errors_and_keeps_the_rest(client):
    data = sample_bytes() + b'{"request": {"messages": [\n'
    body = upload(client, data).json()
    assert body["calls"] == 4
    assert body["line_errors"] == [
        {"line": 5, "message": "cut off mid-record (the JSON ends before it is complete)"}
    ]


@pytest.mark.parametrize(
    "data, fragment",
    [
        (b"", "Send a trace"),
        (b"just some text\n", "No readable record"),
        (orjson.dumps({"hello": "world"}), "No supported trace format"),
        (b"\x1f\x8b\x08\x00garbage", "gzip"),
    ],
)
def test_api_rejects_non_traces_with_a_clear_message(client, data, fragment):
    reply = upload(client, data) if data else client.post(reverse("traces:api-traces"))
    assert reply.status_code == 400
    assert fragment in reply.json()["error"]


def test_format_override_is_honoured_and_checked(client):
    assert upload(client, sample_bytes(), format="anthropic-messages").status_code == 201
    reply = upload(client, sample_bytes(), format="no-such-format")
    assert reply.status_code == 400 and "unknown format" in reply.json()["error"]


@pytest.mark.parametrize("compress", [False, True])
def test_download_is_byte_identical(client, compress):
    original = sample_bytes() + b"not json\r\n"
    if compress:
        original = gzip.compress(original)
    trace_id = upload(client, original, "t.jsonl.gz" if compress else "t.jsonl").json()["id"]
    reply = client.get(reverse("traces:download", args=[trace_id]))
    assert reply.status_code == 200
    assert reply.content == original
    assert "attachment" in reply["Content-Disposition"]


def test_storage_is_content_addressed(client):
    first = upload(client, sample_bytes()).json()["id"]
    blobs_after_first = models.Blob.objects.count()
    upload(client, sample_bytes())
    # The same content uploaded again adds no blob.
    assert models.Blob.objects.count() == blobs_after_first
    calls = models.Call.objects.filter(trace_id=first).order_by("index")
    # Each call stores only what its request appended, not the whole transcript.
    assert [len(c.appended_digests) for c in calls] == [1, 2, 2, 2]
    assert len({c.system_digest for c in calls}) == 1


def test_call_request_is_rebuilt_from_its_delta_chain(client):
    trace_id = upload(client, sample_bytes()).json()["id"]
    page = client.get(reverse("traces:call", args=[trace_id, 4]))
    assert page.status_code == 200
    request = page.context["request"]
    assert len(request.messages) == 7
    assert request.messages[0] == {
        "role": "user",
        "content": "Book 30 minutes with Priya and Tom this week.",
    }
    assert len(request.tools) == 3


def test_pages_render(client):
    trace_id = upload(client, sample_bytes(), "calendar.jsonl").json()["id"]
    listing = client.get("/")
    assert listing.status_code == 200 and b"calendar.jsonl" in listing.content
    detail = client.get(reverse("traces:detail", args=[trace_id]))
    assert detail.status_code == 200
    text = detail.content.decode()
    assert (
        "Finished: the model ended its turn." in text
        and "find_free_slots" in text
        and "parallel ×2" in text
    )
    call = client.get(reverse("traces:call", args=[trace_id, 3]))
    text = call.content.decode()
    assert "What this request appended" in text
    assert "error: calendar service timed out after 5 s" in text


def test_missing_trace_and_call_are_404(client):
    assert client.get("/traces/00000000-0000-0000-0000-000000000000/").status_code == 404
    trace_id = upload(client, sample_bytes()).json()["id"]
    assert client.get(reverse("traces:call", args=[trace_id, 99])).status_code == 404


def test_hostile_text_is_escaped_everywhere(client):
    trace_id = upload(client, hostile_log(), "hostile.jsonl").json()["id"]
    for url in (
        reverse("traces:detail", args=[trace_id]),
        reverse("traces:call", args=[trace_id, 1]),
        reverse("traces:call", args=[trace_id, 2]),
    ):
        html = client.get(url).content.decode()
        assert "<script>window.pwned" not in html
        assert "<img src=x" not in html
        assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html


def test_pages_send_a_csp_without_inline_script(client):
    reply = client.get("/")
    policy = reply["Content-Security-Policy"]
    script_src = next(p for p in policy.split(";") if p.strip().startswith("script-src"))
    assert "'self'" in script_src and "unsafe-inline" not in script_src
    assert "<script>" not in reply.content.decode()


def test_plain_form_upload_redirects_to_the_trace(client):
    reply = client.post(
        reverse("traces:upload"),
        {"file": SimpleUploadedFile("form.jsonl", sample_bytes())},
    )
    assert reply.status_code == 302
    assert reply["Location"].startswith("/traces/")
    bad = client.post(reverse("traces:upload"), {"file": SimpleUploadedFile("x.txt", b"nope")})
    assert bad.status_code == 400 and b"No readable record" in bad.content


def test_call_request_json_is_the_whole_rebuilt_request(client):
    trace_id = upload(client, sample_bytes()).json()["id"]
    body = client.get(reverse("traces:call-request", args=[trace_id, 4])).json()
    assert len(body["messages"]) == 7 and len(body["tools"]) == 3
    assert body["messages"][2]["content"][0]["tool_use_id"] == "toolu_01FreeSlots7Qk"
