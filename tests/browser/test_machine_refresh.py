""" "On this machine" while a store is watched, in a real browser: the cards' counts and
status are read again in place (no timed <meta refresh> reloading the page, a critical
axe violation), the keyboard focus stays on the Stop button, and the watching page has
no serious or critical axe violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_accessibility import violations
from tests.live.conftest import settled_live_state  # noqa: F401  (an autouse fixture)
from tests.watch.test_machine_page import fake, watcher  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_watched_store_card_refreshes_in_place(page, fake, watcher, corpus):  # noqa: F811
    page.goto("/machine/")
    card = page.locator("#store-claude-code")
    card.get_by_role("button", name="Import and keep watching").click()
    expect(card.get_by_role("status")).to_contain_text("2 imported", timeout=30_000)
    assert page.locator('meta[http-equiv="refresh"]').count() == 0
    page.evaluate("window.notReloaded = true")
    stop = card.get_by_role("button", name="Stop")
    stop.focus()

    new = fake.home / ".claude/projects/-work-other/subagent.jsonl"
    new.parent.mkdir()
    new.write_bytes((corpus / "claude_code_jsonl/spotter/subagent.jsonl").read_bytes())
    expect(card.get_by_role("status")).to_contain_text("3 imported", timeout=40_000)
    expect(card.locator(".store-counts")).to_contain_text("3")
    assert page.evaluate("window.notReloaded") is True  # read in place, not reloaded
    assert page.evaluate("document.activeElement.value") == "stop"
    assert not page.js_errors, page.js_errors

    assert violations(page, "machine, watching", "/machine/") == []
    page.locator("#store-claude-code").get_by_role("button", name="Stop").click()
    expect(page.get_by_text("Stopped watching Claude Code.")).to_be_visible()
