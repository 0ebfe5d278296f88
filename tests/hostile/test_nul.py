"""NUL characters (a tool that `cat`s a binary file) are stored losslessly on both
databases and shown as ␀ on pages; the JSON API and downloads keep them exactly."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse

from tests.hostile import inputs
from traces import fields, models

pytestmark = pytest.mark.django_db


def upload_nul_trace(client) -> models.Trace:
    data = inputs.with_text(inputs.NUL, model="claude\x00x", name="read\x00file")
    reply = client.post(
        reverse("traces:api-traces"),
        {"file": SimpleUploadedFile("bin\x00.jsonl", data), "name": "run\x00one"},
    )
    assert reply.status_code == 201, reply.content
    return models.Trace.objects.get(pk=reply.json()["id"])


def test_nul_round_trips_through_every_text_column(client):
    trace = upload_nul_trace(client)
    assert trace.name == "run\x00one"
    call = trace.calls.get(index=1)
    assert call.model == "claude\x00x"
    assert call.tool_call_ids == [f"t{inputs.NUL}1"]
    run = trace.tool_runs.get()
    assert (run.name, run.tool_call_id) == ("read\x00file", f"t{inputs.NUL}1")
    assert inputs.NUL in run.result_preview
    assert any(c["model"] == "claude\x00x" for c in trace.report["calls"])
    assert models.Trace.objects.filter(name="run\x00one").exists()  # lookups escape too


def test_the_escape_is_what_postgresql_holds_and_is_lossless():
    tricky = ["\x00", fields.ESC, fields.ESC + "0", "\x00" + fields.ESC * 3 + "0\x00", "plain"]
    for text in tricky:
        assert fields.unescape(fields.escape(text)) == text
        assert "\x00" not in fields.escape(text)
    value = {"k\x00": ["a\x00", {"b": fields.ESC}]}
    assert fields._walk(fields.escape_json(value), fields.unescape) == value


def test_postgresql_stores_the_escape_sqlite_the_nul(client):
    trace = upload_nul_trace(client)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM traces_trace WHERE id = %s",
            [trace.pk.hex if connection.vendor == "sqlite" else trace.pk],
        )
        (raw,) = cursor.fetchone()
    if connection.vendor == "postgresql":
        assert raw == "run" + fields.ESC + "0one"
    else:
        assert raw == "run\x00one"


def test_pages_show_nul_as_a_visible_symbol_and_the_api_keeps_it(client):
    trace = upload_nul_trace(client)
    for url in (
        reverse("traces:detail", args=[trace.pk]),
        reverse("traces:call", args=[trace.pk, 1]),
        reverse("traces:postmortem", args=[trace.pk]),
        reverse("traces:export-md", args=[trace.pk]),
        reverse("traces:list"),
    ):
        page = client.get(url).content
        assert b"\x00" not in page, url
        assert "␀".encode() in page, url
    report = client.get(reverse("traces:api-trace", args=[trace.pk])).json()
    assert report["calls"][0]["model"] == "claude\x00x"


def test_a_live_line_holding_nul_is_stored_and_the_tail_goes_on(client):
    created = client.post(reverse("traces:api-traces") + "?live=1&name=live\x00nul").json()
    lines = inputs.with_text(inputs.NUL).splitlines(keepends=True)
    url = reverse("live:lines", args=[created["id"]])
    first = client.post(f"{url}?offset=0", data=lines[0], content_type="application/x-ndjson")
    assert first.status_code == 200, first.content
    second = client.post(f"{url}?offset=1", data=lines[1], content_type="application/x-ndjson")
    assert second.json() == {"total": 2, "accepted": 1}
    closed = client.post(reverse("live:close", args=[created["id"]])).json()
    assert closed["calls"] == 2
    trace = models.Trace.objects.get(pk=created["id"])
    assert trace.name == "live\x00nul"
    assert trace.tool_runs.get().name == "read_file"
    assert client.get(reverse("traces:download", args=[trace.pk])).content == b"".join(lines)


@pytest.mark.parametrize("param", ["q", "format", "rule", "model", "label", "tool", "set"])
def test_a_nul_in_a_list_query_is_an_answer_not_a_500(client, param):
    """Issue 26: `q=` with a NUL answered 500 on the list and set pages (PostgreSQL)."""
    upload_nul_trace(client)
    run_set = models.RunSet.objects.create(name="nul set")
    for url in (reverse("traces:list"), reverse("traces:set", args=[run_set.pk])):
        reply = client.get(url, {param: "run\x00one"})
        assert reply.status_code == 200, (url, reply.status_code)
