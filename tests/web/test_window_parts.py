"""A long trace's report is stored with the parts its diagram windows are drawn from
(traces.storage.report_parts): a window move reads the head and its window's parts, and
answers exactly what it answers from the whole report, at part boundaries, in both
spacings, with every lane, through tool names holding markup; a part of an older report
is never read."""

from __future__ import annotations

import pytest

from tests.core.long_session import make_session
from tests.web.long_trace import HOSTILE, uploaded_long_session
from traces import models
from traces.core.outputs.render.sequence.window_parts import PART_CALLS
from traces.storage import report_cache

pytestmark = pytest.mark.django_db

MOVES = [
    "start=1&window=30",
    f"start={PART_CALLS - 10}&window=30",  # across the first boundary
    f"start={PART_CALLS * 3 + 1}&window=200&spacing=time",
    "start=400&window=60&lanes=all",
    "start=1190&window=60&spacing=time&lanes=all",  # the last window, clamped
    "start=999999&window=10",
]


@pytest.fixture(scope="module")
def long_trace(django_db_setup, django_db_blocker):
    """1,200 calls (more than PARTS_FROM_CALLS), one busy tool named with markup."""
    with uploaded_long_session(django_db_blocker) as made:
        yield made


def moves(client, url: str) -> list[dict]:
    answers = []
    for query in MOVES:
        reply = client.get(f"{url}diagram.json?{query}&parts=window")
        assert reply.status_code == 200, query
        answers.append(reply.json())
    return answers


def test_parts_are_stored_with_the_report(long_trace):
    trace, _ = long_trace
    numbers = set(trace.report_parts.values_list("number", flat=True))
    assert numbers == set(range(0, 1200 // PART_CALLS + 1))
    versions = set(trace.report_parts.values_list("report_version", flat=True))
    assert versions == {trace.report_version}


def test_a_move_drawn_from_parts_is_the_move_drawn_from_the_report(client, long_trace):
    trace, url = long_trace
    report_cache.clear()  # a report this process keeps decoded is drawn from instead
    from_parts = moves(client, url)
    assert len(report_cache.store(report_cache.DecodedReports)) == 0
    assert any(HOSTILE not in a["svg"] and "&lt;img" in a["svg"] for a in from_parts)
    kept = list(trace.report_parts.all())
    trace.report_parts.all().delete()
    try:
        report_cache.clear()
        from_report = moves(client, url)
    finally:
        models.ReportPart.objects.bulk_create(kept)
    assert from_parts == from_report
    assert from_parts[1]["window"]["first_call"] < PART_CALLS < from_parts[1]["window"]["last_call"]


def test_a_move_never_reads_the_whole_report_when_parts_hold_it(client, long_trace):
    _, url = long_trace
    report_cache.clear()
    moves(client, url)
    assert len(report_cache.store(report_cache.DecodedReports)) == 0


def test_parts_of_an_older_report_are_not_read(client, long_trace):
    trace, url = long_trace
    before = moves(client, url)
    trace.report_parts.update(report_version=trace.report_version - 1)
    try:
        report_cache.clear()
        assert moves(client, url) == before  # drawn from the whole report instead
        assert len(report_cache.store(report_cache.DecodedReports)) == 1
        trace.report_parts.update(report_version=trace.report_version)
        assert moves(client, url) == before  # and from the cached report while it is kept
    finally:
        trace.report_parts.update(report_version=trace.report_version)


def test_a_long_live_session_gets_its_parts_when_it_closes(client):
    """A session followed live (proxy, watch, tail) is closed with the parts an upload of
    the same lines gets, so its window moves read parts too."""
    from traces.live.writes import append_lines, close_live_trace, create_live_trace

    lines = make_session(PART_CALLS * 6).splitlines()
    trace = create_live_trace(name="long live session")
    append_lines(trace_id=trace.pk, offset=0, lines=lines)
    close_live_trace(trace_id=trace.pk)
    trace.refresh_from_db()
    numbers = set(trace.report_parts.values_list("number", flat=True))
    assert numbers == set(range(0, 7))
    assert set(trace.report_parts.values_list("report_version", flat=True)) == {
        trace.report_version
    }
    report_cache.clear()
    reply = client.get(f"/traces/{trace.pk}/diagram.json?start=1&window=30&parts=window")
    assert reply.status_code == 200
    assert len(report_cache.store(report_cache.DecodedReports)) == 0  # drawn from parts
