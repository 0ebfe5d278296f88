"""Bedrock InvokeModel lines stored as the proxy stores them, on this run's database
(SQLite, or PostgreSQL + Redis with DATABASE_URL / REDIS_URL): the lines are the ones the
recording proxy writes (CapturedExchange over a call SigV4-signed by botocore, answered as
tests/capture/bedrock_standin.py answers), appended through `capture.lines.record_lines`,
the proxy's own path. The closed trace's rows hold the Anthropic loop (calls, stop
reasons, usage, paired tool runs, the URL's model) and the Titan call as an unread line;
no signature, session token or signing date is in any row, the original or a page.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from django.apps import apps
from django.test import Client

from tests.capture.bedrock_standin import (
    ACCESS_KEY,
    HOST,
    MODEL,
    SECRET_KEY,
    SESSION_TOKEN,
    TITAN,
    first_answer,
    invoke_answer,
    tool_follow_up,
)
from traces import live, models
from traces.capture.lines import proxy_key, proxy_trace_name, record_lines
from traces.core.reading import archive, blobs
from traces.core.reading.capture import CapturedExchange, recorded_format

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.corpus]

SESSION = "invoke-rows"


def _signed_line(model: str, body: dict, answer, at: float) -> tuple[bytes, dict[str, str]]:
    """One invoke call signed as boto3 signs it, recorded as the proxy records it."""
    url = f"https://{HOST}/model/{model.replace(':', '%3A')}/invoke"
    raw = json.dumps(body).encode()
    request = AWSRequest("POST", url, data=raw, headers={"Content-Type": "application/json"})
    SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), "bedrock", "us-east-1").add_auth(
        request
    )
    headers = dict(request.headers.items())
    line = CapturedExchange(
        "POST", url, headers, raw, at, status=answer.status,
        response_headers={"content-type": answer.content_type}, ended_at=at + 2.0,
        response_body=b"".join(answer.chunks),
    ).line()  # fmt: skip
    assert recorded_format("bedrock", url.split(HOST, 1)[1]) == "bedrock-invoke"
    return line, headers


def _loop_lines(corpus) -> tuple[list[bytes], list[bytes]]:
    """A Titan call, then the two-turn Claude loop; and the signing material sent."""
    ask = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "What is the weather in New York?"}],
    }
    uses = first_answer(corpus)["content"]
    follow = tool_follow_up(ask, uses)
    titan = {"inputText": "Weather?"}
    lines, secrets = [], [SECRET_KEY.encode(), SESSION_TOKEN.encode()]
    for at, (model, body) in enumerate([(TITAN, titan), (MODEL, ask), (MODEL, follow)]):
        line, headers = _signed_line(model, body, invoke_answer(corpus, "/invoke", body), at * 10.0)
        lines.append(line)
        secrets += [headers["Authorization"].rsplit("=", 1)[1].encode()]
        secrets += [headers["X-Amz-Date"].encode()]
    return lines, secrets


def _stored_values() -> list[bytes]:
    """Every text and binary value of every row of ours, packed ones unpacked too."""
    found = []
    for model in apps.get_app_config("traces").get_models():
        names = [f.attname for f in model._meta.concrete_fields]
        for row in model.objects.values_list(*names):
            for value in row:
                if isinstance(value, (dict, list)):
                    value = json.dumps(value)
                if not isinstance(value, (str, bytes, memoryview)):
                    continue
                data = value.encode() if isinstance(value, str) else bytes(value)
                found.append(data)
                for unpack in (archive.decompress, blobs.unpack):
                    with contextlib.suppress(Exception):
                        found.append(unpack(data))
    return found


def test_recorded_invoke_lines_become_rows_of_one_anthropic_loop(corpus, client: Client):
    lines, secrets = _loop_lines(corpus)
    trace_id = record_lines(
        key=proxy_key("bedrock-invoke", SESSION),
        format_name="bedrock-invoke",
        name=proxy_trace_name("bedrock-invoke", SESSION),
        lines=[line + b"\n" for line in lines],
    )
    assert live.wait_for_reports(30)
    live.close_live_trace(trace_id=trace_id)
    trace = models.Trace.objects.get(pk=trace_id)
    assert trace.format == "bedrock-invoke"

    calls = list(trace.calls.order_by("index"))
    assert [(c.line, c.status, c.stop_reason, c.model) for c in calls] == [
        (2, "ok", "tool_use", MODEL),
        (3, "ok", "end_turn", MODEL),
    ]
    assert [(c.input_tokens, c.output_tokens) for c in calls] == [(721, 112), (38, 24)]
    assert [(c.cache_read_tokens, c.cache_write_tokens) for c in calls] == [(0, 0), (721, 120)]
    assert [(c.started_at, c.ended_at) for c in calls] == [(10.0, 12.0), (20.0, 22.0)]
    assert {c.loop for c in calls} == {1}
    runs = list(trace.tool_runs.order_by("position"))
    assert [(r.status, r.call, r.result_call) for r in runs] == [("paired", 1, 2)] * 2
    (unread,) = trace.line_errors.all()
    assert unread.line == 1 and f"InvokeModel call to {TITAN}" in unread.message

    replies = [client.get(path) for path in (
        f"/traces/{trace_id}/", f"/traces/{trace_id}/download", f"/api/traces/{trace_id}",
        f"/traces/{trace_id}/calls/1/", f"/traces/{trace_id}/calls/1/request.json",
    )]  # fmt: skip
    assert [r.status_code for r in replies] == [200] * 5
    shown = [r.content for r in replies]
    assert b"inputText" in shown[1]  # the unread call is kept in the original
    assert b"get_weather" in shown[3]
    stored = _stored_values()
    for secret in secrets:
        assert not any(secret in value for value in stored), "a credential is stored"
        assert not any(secret in page for page in shown), "a credential is shown"


def test_a_session_of_only_another_family_is_kept_with_its_reason(corpus, client: Client):
    """A Titan-only session is no upload error on the proxy's path: the live trace keeps
    the line and says why it was not read."""
    lines, _ = _loop_lines(corpus)
    trace_id = record_lines(
        key=proxy_key("bedrock-invoke", "titan-only"),
        format_name="bedrock-invoke",
        name=proxy_trace_name("bedrock-invoke", "titan-only"),
        lines=[lines[0] + b"\n"],
    )
    assert live.wait_for_reports(30)
    live.close_live_trace(trace_id=trace_id)
    trace = models.Trace.objects.get(pk=trace_id)
    assert trace.calls.count() == 0
    (unread,) = trace.line_errors.all()
    assert f"InvokeModel call to {TITAN}" in unread.message
    assert b"inputText" in client.get(f"/traces/{trace_id}/download").content
