"""Each process's cache of decoded reports (traces.storage.report_cache): a page visit after the
first skips the decode; any rewrite of the report, by any process, changes its version."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces import models
from traces.fields import decode_json
from traces.services.ingest import trace_reanalyze
from traces.storage.report_cache import DecodedReports, ReportCache, clear
from traces.stores import store

pytestmark = pytest.mark.django_db


def _log() -> bytes:
    q = [user("list the files")]
    r1 = response([tool_use("t1", name="ls", path=".")], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    results = {"role": "user", "content": [tool_result("t1", "a.py\nb.py")]}
    return log(
        pair(q, r1),
        pair([*q, echo, results], response([{"type": "text", "text": "Two files."}], "end_turn")),
    )


@pytest.fixture
def trace_id(client) -> str:
    reply = client.post(
        reverse("traces:api-traces"), {"file": SimpleUploadedFile("run.jsonl", _log())}
    )
    assert reply.status_code == 201
    clear()
    return reply.json()["id"]


def _stored(trace_id: str) -> dict:
    text = (
        models.Trace.objects.filter(pk=trace_id)
        .values_list("report", flat=True)
        .get()  # the field's own decoding: the reference
    )
    return text


def test_the_second_visit_reads_the_report_from_the_cache(client, trace_id):
    cache = store(DecodedReports)
    page = reverse("traces:detail", args=[trace_id])
    assert client.get(page).status_code == 200
    misses, hits = cache.misses, cache.hits
    for _ in range(3):
        assert client.get(page).status_code == 200
    assert cache.misses == misses
    assert cache.hits == hits + 3


def test_pages_never_mutate_the_cached_report(client, trace_id):
    cache = store(DecodedReports)
    prefix = f"/traces/{trace_id}/"
    for path in (
        prefix,
        f"{prefix}?start=2",
        f"{prefix}postmortem",
        f"{prefix}calls/2/",
        f"{prefix}diagram.json",
        f"{prefix}what-if.json?clear_after=1",
        f"{prefix}export.md",
        f"{prefix}export.html",
        f"/api/traces/{trace_id}",
    ):
        reply = client.get(path)
        assert reply.status_code == 200, path
    version = models.Trace.objects.get(pk=trace_id).report_version
    cached = cache.get((models.Trace.objects.get(pk=trace_id).pk, version))
    assert cached is not None
    assert cached == _stored(trace_id)


def test_every_save_of_the_report_increments_its_version(trace_id):
    trace = models.Trace.objects.get(pk=trace_id)
    first = trace.report_version
    trace.save(update_fields=["name"])
    assert models.Trace.objects.get(pk=trace_id).report_version == first
    trace.report = {**trace.report, "note": 1}
    trace.save(update_fields=["report"])
    assert trace.report_version == first + 1
    trace.save()
    assert trace.report_version == first + 2
    trace_reanalyze(trace=models.Trace.objects.get(pk=trace_id))
    assert models.Trace.objects.get(pk=trace_id).report_version == first + 3


def test_a_rewrite_by_another_process_is_seen_on_the_next_visit(client, trace_id):
    page = reverse("traces:api-trace", args=[trace_id])
    assert client.get(page).json()["findings"] is not None
    # Another process rewrites the report: its own instance, its own save.
    other = models.Trace.objects.get(pk=trace_id)
    other.report = {**other.report, "findings": []}
    other.save(update_fields=["report"])
    assert client.get(page).json()["findings"] == []
    trace_reanalyze(trace=models.Trace.objects.get(pk=trace_id))
    assert client.get(page).json()["findings"] == _stored(trace_id)["findings"]


@override_settings(INSPECTOR={"REPORT_CACHE_ENTRIES": 2, "REPORT_CACHE_BYTES": 100})
def test_the_cache_is_bounded_by_count_and_size():
    cache = ReportCache()
    for n in range(4):
        cache.put(("t", n), {"n": n}, 10)
    assert len(cache) == 2 and cache.get(("t", 0)) is None and cache.get(("t", 3)) == {"n": 3}
    cache.get(("t", 2))
    cache.put(("t", 4), {}, 10)  # the least recently used goes: 3, not 2
    assert cache.get(("t", 3)) is None and cache.get(("t", 2)) is not None
    cache.put(("t", 5), {}, 95)
    assert len(cache) == 1 and cache.size == 95
    cache.put(("t", 6), {}, 101)  # larger than the whole cache: not kept
    assert cache.get(("t", 6)) is None


def test_stored_text_decodes_like_the_field():
    assert decode_json('{"a": NaN}', "sqlite")["a"] != 0  # the standard library's fallback
    assert decode_json('{"a": "x\uffff0"}', "postgresql") == {"a": "x\x00"}
