"""A long trace's charts, default what-if and post-mortem input are kept beside its report
(traces.storage.report_views): diagram.json, figures.json, what-if.json and the
post-mortem (page and Markdown) answer from them without decoding the report, with what
they computed from the whole report;
a trace stored without them (or with those of another report) computes and keeps them
on its first request."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.web.long_trace import uploaded_long_session
from traces import models
from traces.storage import report_cache

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "diagram.json",
    "diagram.json?start=101&window=60&spacing=time",
    "figures.json",
    "figures.json?loop=999",
    "what-if.json",
]


@pytest.fixture(scope="module")
def long_trace(django_db_setup, django_db_blocker):
    with uploaded_long_session(django_db_blocker) as made:
        yield made


def answers(client, url: str) -> list[bytes]:
    found = []
    for endpoint in ENDPOINTS:
        report_cache.clear()
        reply = client.get(f"{url}{endpoint}")
        assert reply.status_code == 200, endpoint
        found.append(reply.content)
    return found


def decoded_reports() -> int:
    return len(report_cache.store(report_cache.DecodedReports))


def without_the_report(fetch, endpoint: str):
    """`fetch()` in a cold process, held to reading and decoding no report; its answer."""
    report_cache.clear()
    with CaptureQueriesContext(connection) as queries:
        answer = fetch()
    assert decoded_reports() == 0, endpoint
    reads = [q["sql"] for q in queries.captured_queries if '"traces_trace"."report"' in q["sql"]]
    assert reads == [], endpoint
    return answer


def test_the_default_loops_views_are_stored_with_the_parts(long_trace):
    trace, _ = long_trace
    loop = trace.report["outcome"]["loop"]
    views = models.ReportView.objects.filter(trace=trace)
    assert {view.name for view in views} == {
        f"figures {loop}",
        f"what-if {loop}",
        "what-if source",
        "post-mortem",
    }
    assert {view.report_version for view in views} == {trace.report_version}


def test_the_endpoints_never_read_the_whole_report(client, long_trace):
    _, url = long_trace
    for endpoint in ENDPOINTS:
        reply = without_the_report(
            lambda endpoint=endpoint: client.get(f"{url}{endpoint}"), endpoint
        )
        assert reply.status_code == 200, endpoint


def test_kept_answers_are_the_answers_computed_from_the_report(client, long_trace):
    trace, url = long_trace
    kept = answers(client, url)
    models.ReportView.objects.filter(trace=trace).delete()
    computed = answers(client, url)  # from the decoded report, and kept again
    assert models.ReportView.objects.filter(trace=trace).count() == 2
    report_cache.clear()
    postmortem_page(client, url)
    report_cache.clear()
    client.get(f"{url}what-if.json?clear_after=2")
    assert models.ReportView.objects.filter(trace=trace).count() == 4
    again = answers(client, url)
    for endpoint, *each in zip(ENDPOINTS, kept, computed, again, strict=True):
        assert each[0] == each[1] == each[2], endpoint


def test_the_kept_what_if_is_the_what_if_of_the_same_parameters_asked(client, long_trace):
    """`clear_after=3` (the default) is asked with a parameter, so computed per request."""
    _, url = long_trace
    report_cache.clear()
    kept = client.get(f"{url}what-if.json").json()
    asked = client.get(f"{url}what-if.json?clear_after=3").json()
    assert decoded_reports() == 0  # recomputed from the what-if's kept input
    assert kept == asked
    assert any(s["calls"] for s in kept["what_if"]["scenarios"])  # whole, not a summary's


def test_views_of_another_report_or_code_are_computed_again(client, long_trace):
    trace, url = long_trace
    views = models.ReportView.objects.filter(trace=trace)
    before = answers(client, url)
    for change in ({"report_version": 0}, {"data": {"version": 0, "value": {"figures": 1}}}):
        views.update(**change)
        report_cache.clear()
        assert client.get(f"{url}figures.json").content == before[2]
        assert decoded_reports() == 1
        figures = views.get(name__startswith="figures")
        assert figures.report_version == trace.report_version
        assert figures.data["value"] == client.get(f"{url}figures.json").json()["figures"]
    assert answers(client, url) == before


POSTMORTEM = ["postmortem", "postmortem?rule=serial-independent-calls&findings=2", "export.md"]


def postmortem_page(client, url: str, endpoint: str = "postmortem") -> str:
    reply = client.get(f"{url}{endpoint}")
    assert reply.status_code == 200, endpoint
    # The form's CSRF token is masked anew in every answer.
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", reply.content.decode())


def test_the_postmortem_never_reads_the_whole_report(client, long_trace):
    _, url = long_trace
    for endpoint in POSTMORTEM:
        without_the_report(
            lambda endpoint=endpoint: postmortem_page(client, url, endpoint), endpoint
        )


def test_the_kept_postmortem_is_the_postmortem_of_the_whole_report(client, long_trace):
    trace, url = long_trace
    for endpoint in POSTMORTEM:
        report_cache.clear()
        kept = postmortem_page(client, url, endpoint)
        models.ReportView.objects.filter(trace=trace, name="post-mortem").delete()
        report_cache.clear()
        computed = postmortem_page(client, url, endpoint)  # from the report, and kept
        assert decoded_reports() == 1
        whole = postmortem_page(client, url, endpoint)  # the report cached: read whole
        assert kept == computed == whole, endpoint
    assert "Serial independent calls" in kept or "serial-independent-calls" in kept


ASKED = ["what-if.json?clear_after=1&cache_lifetime=1h", "what-if.json?batch=0&loop=1"]


def test_other_parameters_are_answered_from_the_kept_input_as_from_the_report(client, long_trace):
    trace, url = long_trace
    for endpoint in ASKED:
        kept = without_the_report(
            lambda endpoint=endpoint: client.get(f"{url}{endpoint}").json(), endpoint
        )
        models.ReportView.objects.filter(trace=trace, name="what-if source").delete()
        report_cache.clear()
        computed = client.get(f"{url}{endpoint}").json()  # from the report, and kept
        assert decoded_reports() == 1
        whole = client.get(f"{url}{endpoint}").json()  # the report cached: read whole
        assert kept == computed == whole, endpoint
        assert kept["params"] != client.get(f"{url}what-if.json").json()["params"]
