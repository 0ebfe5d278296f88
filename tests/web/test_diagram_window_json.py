"""diagram.json?parts=window: what the trace page's script needs to move the diagram's
window in place (the drawing, the window, its neighbours' links, the strip's highlight),
nothing it keeps (no figures, no strip); read from the diagram index kept beside the
cached report, which a new report version replaces; hostile tool names stay escaped."""

from __future__ import annotations

import re

import pytest

from tests.core.long_session import make_session
from tests.web.test_api_and_pages import upload
from traces import models
from traces.storage.report_cache import DerivedValues
from traces.stores import store

pytestmark = pytest.mark.django_db

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def trace_url(client) -> str:
    """150 calls in one loop, one of its busiest tools named with markup."""
    data = make_session(150).replace(b'"name":"tool_3"', f'"name":"{HOSTILE}"'.encode())
    return upload(client, data, "session.jsonl").json()["url"]


def test_a_window_move_answers_with_only_what_moving_changes(client, trace_url):
    reply = client.get(trace_url + "diagram.json?loop=1&start=61&window=60&parts=window")
    assert reply.status_code == 200
    view = reply.json()
    assert set(view) == {
        "svg", "window", "overview_current", "overview_title", "previous_href",
        "next_href", "lanes_href", "spacing", "window_size",
    }  # fmt: skip
    assert view["window"]["start"] == 61 and view["window"]["end"] == 120
    assert view["window"]["total"] == 150
    assert view["previous_href"] == "?loop=1&start=1&window=60&spacing=step#sequence"
    assert view["next_href"] == "?loop=1&start=121&window=60&spacing=step#sequence"
    assert re.findall(r'<svg[^>]*class="seq (wide|compact)', view["svg"]) == ["wide", "compact"]
    assert view["svg"].count('data-start="61"') == 2
    assert view["overview_title"] == "Overview of the loop: 150 calls; calls 61–120 shown"
    # The highlight is where the page's own strip draws it for that window.
    page = client.get(trace_url + "?loop=1&start=61").content.decode()
    drawn = re.search(r'class="ov-current" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', page)
    assert drawn
    assert abs(float(drawn.group(1)) - view["overview_current"]["x"]) < 0.01
    assert abs(float(drawn.group(2)) - view["overview_current"]["width"]) < 0.01
    # The last window has no next; the whole answer (live redraw) is unchanged.
    last = client.get(trace_url + "diagram.json?start=121&parts=window").json()
    assert last["next_href"] is None and last["window"]["end"] == 150
    whole = client.get(trace_url + "diagram.json?start=61").json()
    assert {"svg", "overview", "window", "figures", "window_heading"} <= set(whole)
    assert whole["figures"] and "tool_run_rows" in whole  # the live page's redraw
    assert "figures" not in view and "tool_run_rows" not in view  # a move needs neither


def test_the_page_is_sent_the_wide_layout_and_a_move_the_layout_it_asks_for(client, trace_url):
    """The compact (phone) layout is as heavy as the wide one: the page is sent the wide
    one alone, and diagram.json draws one layout when asked (the script asks for the one
    the viewport shows), both when not (the live redraw's answer, older scripts)."""
    page = client.get(trace_url + "?loop=1&start=61").content.decode()
    assert re.findall(r'<svg[^>]*class="seq (wide|compact)', page) == ["wide"]
    for layout in ("wide", "compact"):
        view = client.get(
            trace_url + f"diagram.json?loop=1&start=61&window=60&parts=window&layout={layout}"
        ).json()
        assert re.findall(r'<svg[^>]*class="seq (wide|compact)', view["svg"]) == [layout]
        assert view["svg"].count('data-start="61"') == 1
        assert HOSTILE not in view["svg"] and "&lt;img src=x" in view["svg"]
    odd = client.get(trace_url + "diagram.json?start=61&parts=window&layout=<b>").json()
    assert re.findall(r'<svg[^>]*class="seq (wide|compact)', odd["svg"]) == ["wide", "compact"]
    whole = client.get(trace_url + "diagram.json?start=61").json()
    assert re.findall(r'<svg[^>]*class="seq (wide|compact)', whole["svg"]) == ["wide", "compact"]


def test_the_page_loads_the_script_with_the_endpoint(client, trace_url):
    page = client.get(trace_url).content.decode()
    script = re.search(r'<script src="[^"]*js/diagram_window\.js"[^>]*>', page)
    path = trace_url.removeprefix("http://testserver")
    assert script and f'data-diagram="{path}diagram.json"' in script.group(0)
    assert 'id="diagram-window-heading"' in page
    assert re.search(r'<script>|\son\w+="', page) is None  # CSP: no inline script


def test_moves_read_the_kept_index_and_a_new_report_replaces_it(client, trace_url):
    trace_id = trace_url.rstrip("/").rsplit("/", 1)[1]
    client.get(trace_url + "diagram.json?start=61&parts=window")
    trace = models.Trace.objects.get(pk=trace_id)
    kept = store(DerivedValues).get((trace.pk, trace.report_version, "diagram index"))
    assert kept is not None
    client.get(trace_url + "diagram.json?start=121&parts=window")
    again = store(DerivedValues).get((trace.pk, trace.report_version, "diagram index"))
    assert again is kept  # built once for every move
    before = client.get(trace_url + "diagram.json?start=61&parts=window").json()["svg"]
    trace.report = {**trace.report, "findings": []}
    trace.save(update_fields=["report"])
    after = client.get(trace_url + "diagram.json?start=61&parts=window").json()["svg"]
    assert "data-rule=" in before and "data-rule=" not in after  # no finding, no badge


def test_hostile_tool_names_stay_escaped_in_a_moved_window(client, trace_url):
    svg = client.get(trace_url + "diagram.json?start=61&parts=window").json()["svg"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in svg
    assert "<img" not in svg


def test_a_report_too_large_for_the_cache_keeps_no_index_either(client, trace_url, settings):
    """The index points into the report: kept for a report the cache refuses, it would
    keep that report in memory past REPORT_CACHE_BYTES."""
    settings.INSPECTOR = {"REPORT_CACHE_BYTES": 10_000}
    trace_id = trace_url.rstrip("/").rsplit("/", 1)[1]
    trace = models.Trace.objects.get(pk=trace_id)
    store(DerivedValues).clear()
    moved = client.get(trace_url + "diagram.json?start=61&parts=window").json()
    assert moved["window"]["start"] == 61 and 'data-start="61"' in moved["svg"]
    assert store(DerivedValues).get((trace.pk, trace.report_version, "diagram index")) is None
    settings.INSPECTOR = {}
    client.get(trace_url + "diagram.json?start=61&parts=window")
    assert store(DerivedValues).get((trace.pk, trace.report_version, "diagram index"))
