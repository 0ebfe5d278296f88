"""In a real browser: search the calls' text from the list's box, see the hostile text
as escaped snippets with the words marked (no script of the trace runs), and follow the
snippet's link to the call."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.test_content_search import hostile_log
from traces.core.reading.sample import sample_bytes
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_search_the_calls_text_and_open_the_matching_call(page, tmp_path):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    hostile = trace_upload(files=[("", hostile_log())], name="hostile run").trace
    trace_upload(files=[("", sample_bytes())], name="calendar sample")
    page.goto("/")
    box = page.get_by_role("searchbox", name=re.compile("calls' text"))
    box.fill("script alert")
    box.press("Enter")
    hit = page.locator("tr.content-hit")
    expect(hit).to_have_count(1)
    expect(hit.locator("mark")).to_have_text(["script", "alert", "script"])
    expect(hit.locator(".snippet")).to_contain_text("<script>alert('x')</script>")
    assert dialogs == []  # the trace's <script> is text, never markup
    page.screenshot(path=tmp_path / "content-search.png", full_page=True)
    assert (tmp_path / "content-search.png").stat().st_size > 10_000
    hit.get_by_role("link", name="Call 1").click()
    expect(page).to_have_url(re.compile(rf"/traces/{hostile.pk}/calls/1/$"))
    assert page.js_errors == []
