"""A long loop's trace page stays light (issues 24 and 25): at 20,000 calls the HTML is
at most 500 KB and every Plotly series at most 2,000 points, wherever the figures come
from (embedded, `figures.json`, `what-if.json`); findings are paged; the cards agree
with the breakdown and never say 0 for what was not reported."""

from __future__ import annotations

import html as html_lib
import re

import orjson
import pytest
from django.urls import reverse

from tests.core.long_session import make_session
from traces.core.outputs.render.downsample import POINT_BUDGET
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db

PAGE_BUDGET = 500 * 1024


def series_lengths(figures: dict) -> list[int]:
    return [
        len(trace.get("x") or trace.get("y") or [])
        for figure in figures.values()
        if figure
        for trace in figure["data"]
    ]


def embedded_figures(page: str) -> dict:
    blocks = re.findall(r'<script id="(figure-[^"]+)" type="application/json">(.*?)</script>', page)
    return {name: orjson.loads(html_lib.unescape(body)) for name, body in blocks}


def fetched_sources(page: str) -> set[str]:
    return {html_lib.unescape(src) for src in re.findall(r'data-figure-src="([^"]+)"', page)}


def check_long_page(client, trace, calls: int) -> str:
    """The page's size, its figures' points wherever they are, and the cards; the page."""
    reply = client.get(reverse("traces:detail", args=[trace.pk]))
    assert reply.status_code == 200
    page = reply.content.decode()
    figures = embedded_figures(page)
    sources = fetched_sources(page)
    assert len(sources) == 2  # the trace's charts and the what-if panel's
    for src in sources:
        answer = client.get(src)
        assert answer.status_code == 200, src
        figures |= answer.json()["figures"]
    lengths = series_lengths(figures)
    assert lengths and max(lengths) <= POINT_BUDGET
    for name in ("growth", "whatif_growth", "cost"):  # grouped, not cut short
        assert len(figures[name]["data"][0]["x"]) == min(calls, POINT_BUDGET), name
    # The card's input total is the breakdown's.
    card = re.search(r"<dt>Input tokens</dt><dd[^>]* title=\"([^\"]+)\"", page).group(1)
    total = re.search(r'Input total</th><td class="num"[^>]*>([^<]+)</td>', page).group(1)
    assert card.split(" (")[0] == total
    return page


@pytest.mark.slow
def test_the_page_of_a_twenty_thousand_call_loop_is_light(client):
    trace = trace_upload(files=[("long.jsonl", make_session(20_000))], name="long").trace
    assert trace.calls_count == 20_000
    page = check_long_page(client, trace, 20_000)
    assert len(page.encode()) <= PAGE_BUDGET, f"{len(page.encode()) / 1024:.0f} KB"
    assert page.count('<li class="finding ') == 50


def test_a_loop_past_five_hundred_calls_fetches_its_charts_and_pages_its_findings(client):
    trace = trace_upload(files=[("long.jsonl", make_session(600))], name="long").trace
    page = check_long_page(client, trace, 600)
    assert "figure-growth" not in page  # fetched, not embedded
    assert 'data-figure-key="growth"' in page and 'data-figure-key="whatif_growth"' in page
    assert "calls 1–30 of 600" in page  # a long loop opens on the small window
    findings = trace.report["findings"]
    assert len(findings) > 50
    assert page.count('<li class="finding ') == 50
    second = client.get(reverse("traces:detail", args=[trace.pk]), {"findings": "2"})
    text = second.content.decode()
    assert f"{len(findings):,} findings, 51–" in text
    # Permalinks keep each finding's number in the whole report.
    number = int(re.search(r"/findings/(\d+)/", text.split('class="findings"')[1]).group(1))
    assert number >= 51
    assert findings[number - 1]["call"] is not None


def test_a_short_loop_keeps_its_figures_in_the_page(client):
    trace = trace_upload(files=[("short.jsonl", make_session(40))], name="short").trace
    page = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    figures = embedded_figures(page)
    assert {"figure-growth", "figure-cost", "figure-whatif_growth"} <= set(figures)
    assert "data-figure-src" not in page
    assert len(figures["figure-growth"]["data"][0]["x"]) == 40  # exact: one bar a call


def test_a_trace_without_usage_shows_its_estimate_and_no_zero_output(client):
    messages = [
        {"role": "system", "content": "You are a coding agent. " * 40},
        {"role": "user", "content": "Fix the failing test."},
        {"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "line 1: ok\n" * 40},
        {"role": "assistant", "content": "Done."},
    ]  # fmt: skip
    data = orjson.dumps({"messages": messages})
    trace = trace_upload(files=[("chat.json", data)], name="chat").trace
    assert trace.input_tokens == 0  # nothing was reported
    page = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    card = re.search(r"<dt>Input tokens</dt><dd[^>]* title=\"([^\"]+)\">([^<]+)<", page)
    total = re.search(r'Input total</th><td class="num"[^>]*>([^<]+)</td>', page).group(1)
    assert total.startswith("≈ ") and int(total[2:].replace(",", "")) > 0
    assert card.group(1).split(" (")[0] == total and card.group(2).startswith("≈ ")
    assert re.search(r"<dt>Output tokens</dt><dd[^>]*>not reported</dd>", page)
    assert re.search(r'<th scope="row">Output</th><td class="num"[^>]*>not reported</td>', page)
