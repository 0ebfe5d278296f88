"""The loop seen in a real browser: the diagram, the charts, the export, hostile text."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.charts import wait_for_charts
from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces.core.reading.sample import sample_bytes
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAYLOAD = (
    "<script>window.pwned=1;alert(1)</script>"
    '<img src=x onerror="window.pwned=2;alert(2)">'
    '" onmouseover="window.pwned=3" x="'
)


@pytest.fixture
def sample_trace():
    return trace_upload(files=[("c.jsonl", sample_bytes())], name="calendar").trace


@pytest.fixture
def hostile_trace():
    q = [user(PAYLOAD)]
    r1 = response(
        [{"type": "text", "text": PAYLOAD}, tool_use("t1" + PAYLOAD, name=PAYLOAD, q=PAYLOAD)],
        "tool_use",
    )
    r1["model"] = PAYLOAD
    echo = {"role": "assistant", "content": r1["content"]}
    results = {"role": "user", "content": [tool_result("t1" + PAYLOAD, PAYLOAD, True)]}
    r2 = response([{"type": "text", "text": PAYLOAD}], "end_turn")
    data = log(pair(q, r1, system=PAYLOAD), pair([*q, echo, results], r2, system=PAYLOAD))
    return trace_upload(files=[("hostile.jsonl", data)], name=PAYLOAD).trace


def test_diagram_renders_and_an_arrow_opens_its_call(page, sample_trace):
    page.goto(f"/traces/{sample_trace.pk}/")
    diagram = page.locator("#sequence svg.seq.wide")
    expect(diagram).to_be_visible()
    # Four calls: a billed request and response each; four tool runs out and back.
    expect(diagram.locator('a.arrow[data-billed="true"]')).to_have_count(8)
    expect(diagram.locator('a.arrow[data-billed="false"]')).to_have_count(8)
    expect(diagram.locator('a.arrow[data-kind="tool-call"][data-call="2"]')).to_have_count(2)
    diagram.locator('a.arrow[data-kind="request"][data-call="3"]').click()
    expect(page).to_have_url(f"{page.url.split('/traces/')[0]}/traces/{sample_trace.pk}/calls/3/")
    expect(page.get_by_role("heading", name="Call 3")).to_be_visible()
    assert page.js_errors == []


def test_charts_draw_with_data_and_follow_the_theme(page, sample_trace):
    page.goto(f"/traces/{sample_trace.pk}/")
    growth = page.locator("#chart-growth")
    wait_for_charts(page, "#chart-growth")
    expect(growth.locator(".main-svg").first).to_be_visible()
    traces = page.evaluate("document.getElementById('chart-growth').data.length")
    assert traces >= 4
    bars = page.evaluate("document.getElementById('chart-growth').data[0].y")
    assert bars == [800, 800, 800, 800]  # the prefix, re-sent on every call
    before = page.evaluate("document.getElementById('chart-growth').layout.font.color")
    page.get_by_role("button", name="Switch light or dark theme").click()
    after = page.evaluate("document.getElementById('chart-growth').layout.font.color")
    assert before != after
    assert page.js_errors == []


def test_exported_html_opens_offline_and_shows_the_diagram(page, browser, sample_trace, tmp_path):
    page.goto(f"/traces/{sample_trace.pk}/postmortem")
    with page.expect_download() as download:
        page.get_by_role("link", name="Self-contained HTML").click()
    path = tmp_path / "export.html"
    download.value.save_as(path)
    context = browser.new_context(offline=True)
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    offline = context.new_page()
    offline.goto(path.as_uri())
    expect(offline.locator("svg.seq")).to_be_visible()
    expect(offline.locator('svg.seq a.arrow[data-billed="true"]')).to_have_count(8)
    expect(offline.get_by_role("heading", name="Where the tokens went")).to_be_visible()
    assert [url for url in requests if not url.startswith("file:")] == []
    context.close()


def test_hostile_text_executes_nothing(page, hostile_trace):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for path in ("", "calls/1/", "calls/2/", "postmortem"):
        page.goto(f"/traces/{hostile_trace.pk}/{path}")
        page.wait_for_load_state("load")
        page.mouse.move(400, 400)
        assert page.evaluate("typeof window.pwned") == "undefined"
    page.goto(f"/traces/{hostile_trace.pk}/")
    expect(page.locator("#sequence svg.seq.wide")).to_be_visible()
    page.locator("#sequence svg.seq.wide a.arrow").first.hover()
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert dialogs == []
    # The payload is shown as text, not swallowed.
    expect(page.get_by_role("heading", level=1)).to_contain_text("<script>window.pwned=1")
