"""A person's first minute: upload a trace in the browser, see its calls, open one."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from traces.core.reading.sample import sample_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_upload_through_the_page_then_open_a_call(page, tmp_path):
    trace_file = tmp_path / "calendar.jsonl"
    trace_file.write_bytes(sample_bytes())
    page.goto("/")
    expect(page.get_by_role("heading", name="Look inside a tool-call loop")).to_be_visible()
    page.locator("#id_file").set_input_files(str(trace_file))
    # One file: the page follows the upload to its trace.
    expect(page.get_by_role("heading", name="calendar.jsonl")).to_be_visible()
    expect(page.locator("table.calls tbody tr")).to_have_count(4)
    expect(page.get_by_text("Finished: the model ended its turn.", exact=True)).to_be_visible()
    page.get_by_role("link", name="Open call 3").click()
    expect(page.get_by_role("heading", name="What this request appended")).to_be_visible()
    expect(
        page.get_by_text("error: calendar service timed out after 5 s", exact=True)
    ).to_be_visible()
    # Keyboard: j moves to the next call of the loop.
    page.keyboard.press("j")
    expect(page.get_by_role("heading", name="Call 4")).to_be_visible()
    assert page.js_errors == []


def test_several_files_show_progress_and_errors(page, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_bytes(sample_bytes())
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"this is not a trace\n")
    page.goto("/")
    page.locator("#id_file").set_input_files([str(good), str(bad)])
    rows = page.locator("#upload-progress li")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).get_by_role("link")).to_have_text("4 calls · open")
    expect(rows.nth(1)).to_contain_text("No readable record")


def test_theme_toggle_switches_and_persists(page):
    page.goto("/")
    html = page.locator("html")
    before = html.get_attribute("data-theme")
    page.get_by_role("button", name="Switch light or dark theme").click()
    after = html.get_attribute("data-theme")
    assert {before, after} == {"light", "dark"}
    page.reload()
    expect(html).to_have_attribute("data-theme", after)
