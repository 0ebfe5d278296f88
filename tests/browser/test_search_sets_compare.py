"""In a real browser: filter the list by rule and outcome, page through it, open a run
set, and open a comparison whose numbers match each side's JSON report."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.core.builders import log, pair, response, tool_use, user
from traces import models
from traces.core.reading.sample import sample_bytes, serial_sample_bytes
from traces.services import set_ingest
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def dangling_log(tool: str = "grep") -> bytes:
    return log(pair([user("go")], response([tool_use("t1", name=tool, path="a")], "tool_use")))


def api_error_log() -> bytes:
    return log(
        pair([user("go")], {"type": "error", "error": {"message": "overloaded"}}, status=529)
    )


def test_filter_by_rule_and_outcome_then_page_through(page):
    trace_upload(files=[("", sample_bytes())], name="finished run")
    trace_upload(files=[("", dangling_log())], name="dangling run")
    trace_upload(files=[("", api_error_log())], name="api error run")
    models.Trace.objects.bulk_create(
        models.Trace(name=f"filler {n:03d}", format="anthropic-messages", calls_count=n)
        for n in range(110)
    )
    page.goto("/")
    expect(page.locator("#list-count")).to_have_text("1–50 of 113")
    page.get_by_label("Rule fired").select_option("dangling-tool-call")
    page.get_by_label("Outcome").select_option("halted")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"outcome=halted"))
    assert "rule=dangling-tool-call" in page.url
    rows = page.locator("table.trace-list tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("dangling run")
    expect(page.get_by_role("list", name="Filters in use")).to_contain_text("dangling-tool-call")
    # The same view from a shared URL; then drop the rule filter with its chip.
    page.goto(page.url)
    expect(rows).to_have_count(1)
    page.get_by_role("link", name="Remove filter rule").click()
    expect(rows).to_have_count(1)  # only the dangling run halted on tool_use
    page.goto("/?outcome=api_error")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("api error run")
    # Paging keeps the sort: calls, most first.
    page.goto("/")
    page.get_by_role("link", name=re.compile("^Calls")).click()
    expect(page).to_have_url(re.compile(r"sort=-calls"))
    expect(rows.first).to_contain_text("filler 109")
    page.get_by_role("link", name="Next →").click()
    expect(page.get_by_text("Page 2 of 3")).to_be_visible()
    assert "sort=-calls" in page.url and "page=2" in page.url
    expect(rows).to_have_count(50)
    expect(rows.first).to_contain_text("filler 059")
    page.get_by_role("link", name="Last page").click()
    expect(rows).to_have_count(13)
    assert page.js_errors == []


def test_open_a_run_set_page(page):
    run_set = set_ingest.set_upload(
        name="nightly",
        files=[
            ("parallel.jsonl", sample_bytes()),
            ("serial.jsonl", serial_sample_bytes()),
            ("dangling.jsonl", dangling_log()),
        ],
    ).run_set
    page.goto("/sets/")
    page.get_by_role("link", name="nightly").click()
    expect(page.get_by_role("heading", name="nightly", level=1)).to_be_visible()
    expect(page.locator('#outcome-counts [data-outcome="finished"]')).to_have_text("2")
    expect(page.locator('#outcome-counts [data-outcome="halted_on_tool_use"]')).to_have_text("1")
    # Plotly draws one distribution per measure; hovering a point names its run.
    expect(page.locator("#chart-calls .main-svg").first).to_be_visible(timeout=60_000)
    expect(page.locator("#chart-cost .main-svg").first).to_be_visible(timeout=60_000)
    rules = page.locator("#set-rules")
    expect(rules).to_contain_text("dangling-tool-call")
    rules.get_by_role("link", name="serial-independent-calls", exact=True).click()
    rows = page.locator("table.trace-list tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("serial.jsonl")
    assert f"/sets/{run_set.pk}/" in page.url
    assert page.js_errors == []


def test_open_a_comparison_and_check_it_against_both_reports(page):
    run_set = set_ingest.set_upload(
        name="calendar",
        files=[("parallel.jsonl", sample_bytes()), ("serial.jsonl", serial_sample_bytes())],
    ).run_set
    parallel = run_set.runs.get(name="parallel.jsonl")
    serial = run_set.runs.get(name="serial.jsonl")
    page.goto(f"/traces/{parallel.pk}/")
    page.get_by_label("Compare with", exact=True).select_option(str(serial.pk))
    page.get_by_role("button", name="Compare", exact=True).click()
    expect(page.get_by_role("heading", name="Two runs side by side")).to_be_visible()
    reports = {
        side: page.request.get(f"/api/traces/{trace.pk}").json()
        for side, trace in (("a", parallel), ("b", serial))
    }

    def cell(key: str, side: str) -> str:
        return page.locator(
            f'#compare-totals tr[data-total="{key}"] td[data-side="{side}"]'
        ).inner_text()

    def number(text: str) -> int:
        return int(text.replace(",", "").replace("+", "").replace("−", "-"))

    for side, report in reports.items():
        totals = report["totals"]
        assert number(cell("calls", side)) == totals["calls"]
        assert number(cell("input", side)) == sum(totals["buckets"].values())
        assert number(cell("output", side)) == totals["output_tokens"]
        for bucket, tokens in totals["buckets"].items():
            assert number(cell(f"bucket-{bucket}", side)) == tokens
        assert number(cell("findings", side)) == len(report["findings"])
    input_a = sum(reports["a"]["totals"]["buckets"].values())
    input_b = sum(reports["b"]["totals"]["buckets"].values())
    assert (input_a, input_b) == (6160, 7780)
    assert number(cell("input", "delta")) == input_b - input_a == 1620
    assert number(cell("calls", "delta")) == 1
    calls = page.locator("#compare-calls tbody tr")
    expect(calls).to_have_count(5)
    expect(calls.nth(4)).to_contain_text("no call")
    expect(page.locator("#divergence-at")).to_have_text("4")
    expect(page.locator("#findings-only_b")).to_contain_text("serial-independent-calls")
    assert page.js_errors == []


def test_upload_several_files_as_a_run_set_with_labels(page, tmp_path):
    first, second = tmp_path / "parallel.jsonl", tmp_path / "serial.jsonl"
    first.write_bytes(sample_bytes())
    second.write_bytes(serial_sample_bytes())
    page.goto("/")
    page.locator("#id_labels").fill("baseline, nightly")
    page.locator("#id_set").fill("night 1")
    page.locator("#id_file").set_input_files([str(first), str(second)])
    # One request for the set; the page then opens the set.
    expect(page.get_by_role("heading", name="night 1", level=1)).to_be_visible()
    expect(page.locator("table.trace-list tbody tr")).to_have_count(2)
    expect(page.locator("table.trace-list .label").first).to_have_text("baseline")
    run_set = models.RunSet.objects.get(name="night 1")
    assert sorted(run_set.runs.values_list("name", flat=True)) == ["parallel.jsonl", "serial.jsonl"]
    assert page.js_errors == []
