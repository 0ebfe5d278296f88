"""The trace page of a long trace is built from its page summary and its window's parts
(traces.pages.page_report), never from its whole report, and is the page built from the
whole report, to the byte: on a generated 1,200-call Claude Code session in several
views, and with the figures of real corpus traces computed both ways."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.web.long_trace import HOSTILE, uploaded_long_session
from traces import models
from traces.storage import report_cache

pytestmark = pytest.mark.django_db

VIEWS = [
    "",
    "?start=101&window=60",
    "?start=1150&window=120&spacing=time&lanes=all",
    "?start=999999&window=10",
]
CSRF = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"')


@pytest.fixture(scope="module")
def long_trace(django_db_setup, django_db_blocker):
    with uploaded_long_session(django_db_blocker) as made:
        yield made


def pages(client, url: str) -> list[bytes]:
    answers = []
    for query in VIEWS:
        report_cache.clear()  # a report this process keeps decoded is drawn from instead
        reply = client.get(f"{url}{query}")
        assert reply.status_code == 200, query
        answers.append(CSRF.sub(b"", reply.content))
    return answers


def test_the_summary_is_stored_with_the_parts(long_trace):
    trace, _ = long_trace
    summary = models.PageSummary.objects.get(trace=trace)
    assert summary.report_version == trace.report_version
    assert summary.data["call_count"] == 1200
    assert "calls" not in summary.data["report"]


def test_the_page_from_the_summary_is_the_page_from_the_report(client, long_trace):
    trace, url = long_trace
    from_summary = pages(client, url)
    assert all(HOSTILE.encode() not in page for page in from_summary)
    kept = models.PageSummary.objects.get(trace=trace)
    kept.delete()
    try:
        from_report = pages(client, url)
    finally:
        kept.save()
    for query, summary_page, report_page in zip(VIEWS, from_summary, from_report, strict=True):
        assert summary_page == report_page, query


def test_the_page_never_reads_the_whole_report(client, long_trace):
    _, url = long_trace
    for query in VIEWS:
        report_cache.clear()
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"{url}{query}").status_code == 200
        assert len(report_cache.store(report_cache.DecodedReports)) == 0, query
        reads = [
            q["sql"] for q in queries.captured_queries if '"traces_trace"."report"' in q["sql"]
        ]
        assert reads == [], query


def test_views_the_summary_lacks_read_the_report(client, long_trace):
    """Another what-if, a later page of findings: the report, as before."""
    _, url = long_trace
    for query in ("?clear_after=3", "?findings=2"):
        report_cache.clear()
        assert client.get(f"{url}{query}").status_code == 200
        assert len(report_cache.store(report_cache.DecodedReports)) == 1, query


def test_a_summary_of_an_older_report_is_not_read(client, long_trace):
    trace, url = long_trace
    models.PageSummary.objects.filter(trace=trace).update(report_version=0)
    try:
        report_cache.clear()
        assert client.get(url).status_code == 200
        assert len(report_cache.store(report_cache.DecodedReports)) == 1
    finally:
        models.PageSummary.objects.filter(trace=trace).update(report_version=trace.report_version)


def test_the_page_reads_the_summary_even_with_its_report_decoded(client, long_trace):
    """Drawn from the decoded report, the page walked every call for its strip, figures
    and tables (238 ms of CPU at 20,000 calls, 69 ms from the summary)."""
    _, url = long_trace
    report_cache.clear()
    alone = CSRF.sub(b"", client.get(url).content)
    assert client.get(f"{url}export.html").status_code == 200  # reads the whole report
    assert len(report_cache.store(report_cache.DecodedReports)) == 1  # kept decoded
    with CaptureQueriesContext(connection) as queries:
        reply = client.get(url)
    assert any('"traces_pagesummary"' in q["sql"] for q in queries.captured_queries)
    assert CSRF.sub(b"", reply.content) == alone
