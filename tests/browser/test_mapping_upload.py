"""Uploading a log of one's own with a mapping file through the page."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "mapping-examples"


def test_choose_a_mapping_then_drop_the_log(page):
    page.goto("/")
    page.get_by_label("Mapping").set_input_files(str(EXAMPLES / "chat-log.mapping.yaml"))
    page.locator("#id_file").set_input_files(str(EXAMPLES / "chat-log.jsonl"))
    expect(page.get_by_role("heading", name="chat-log.jsonl")).to_be_visible()
    expect(page.get_by_text("read with your mapping file room-booker log")).to_be_visible()
    expect(page.locator("table.calls tbody tr")).to_have_count(3)
    assert page.js_errors == []


def test_a_file_no_format_claims_says_what_it_looks_like(page, tmp_path):
    mine = tmp_path / "mine.jsonl"
    mine.write_bytes(b'{"step": 1, "llm": {"said": "hi"}}\n')
    page.goto("/")
    page.locator("#id_file").set_input_files(str(mine))
    row = page.locator("#upload-progress li")
    expect(row).to_contain_text("record 1 is an object with keys step (number), llm (object)")
    expect(row).to_contain_text("--mapping FILE")
