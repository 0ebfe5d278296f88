"""The page /usage/ against totals computed here from the stored calls, its links and its
leniency with bad input."""

from __future__ import annotations

import html
from urllib.parse import parse_qs, urlparse

import orjson
import pytest

from tests.core.builders import log, pair, response, user
from traces import models
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db

SESSIONS = (
    "claude_code_jsonl/codemie_session-196820da.jsonl",
    "claude_code_jsonl/codemie_session-624a4a58.jsonl",
)


@pytest.fixture
def stored(corpus):
    return [
        trace_upload(files=[(name, (corpus / name).read_bytes())], name=name).trace
        for name in SESSIONS
    ]


def test_the_page_adds_up_the_stored_calls(client, stored):
    page = client.get("/usage/?period=monthly&tz=UTC")
    assert page.status_code == 200
    summary = page.context["summary"]
    calls = models.Call.objects.filter(trace__in=stored)
    assert summary["totals"]["calls"] == calls.count()
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
        assert summary["totals"][name] == sum(getattr(c, name) for c in calls), name
    cost = sum(c["cost_usd"] or 0 for t in stored for c in t.report["calls"])
    assert summary["totals"]["cost_usd"] == pytest.approx(cost, rel=1e-6)
    text = page.content.decode()
    assert html.escape(summary["periods"][0]["period"]) in text
    assert 'data-figure="figure-usage"' in text and "plotly.min.js" in text
    assert "<script>" not in text  # data goes in JSON blocks, never inline script


def test_findings_link_to_their_sessions(client, stored):
    page = client.get("/usage/?tz=UTC")
    findings = page.context["summary"]["findings"]
    assert findings
    href = findings[0]["href"]
    assert parse_qs(urlparse(href).query)["rule"] == [findings[0]["rule"]]
    listed = client.get(href)
    assert listed.status_code == 200
    names = {t.name for t in stored if any(f["rule"] == findings[0]["rule"]
                                            for f in t.report["findings"])}  # fmt: skip
    body = listed.content.decode()
    assert all(html.escape(name) in body for name in names)
    assert html.escape(href) in page.content.decode()


def test_bad_input_is_named_never_a_500(client, stored):
    page = client.get("/usage/?period=hourly&tz=Mars/Olympus&since=yesterday")
    assert page.status_code == 200
    problems = page.context["problems"]
    assert any("period" in p for p in problems)
    assert any("time zone" in p for p in problems)
    assert any("not a date" in p for p in problems)
    empty = client.get("/usage/?since=2001-01-01&until=2001-01-02")
    assert empty.status_code == 200 and "No calls in this range." in empty.content.decode()


def test_trace_text_is_escaped(client):
    hostile = "<img src=x onerror=alert(1)>"
    reply = response([{"type": "text", "text": "done"}], "end_turn")
    reply["model"] = hostile
    line = orjson.loads(pair([user("hi")], reply))
    line["request"]["model"] = hostile
    trace_upload(files=[("evil.jsonl", log(orjson.dumps(line)))], name="evil")
    page = client.get("/usage/?tz=UTC")
    body = page.content.decode()
    assert hostile not in body
    assert html.escape(hostile) in body
