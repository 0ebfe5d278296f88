"""Numbers and codes in a real browser, at 1280 and 390 px, light and dark: an eval's
scores on the trace, set and compare pages, a fix that costs more in words, stop reasons
and outcomes never broken mid-word, the audit log's named, zoned events. Nothing sticks
out of a phone's width. Screenshots go to $INSPECTOR_SCREENSHOTS (`-1280`/`-390` names)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.test_phone_widths import WIDEST
from tests.browser.test_share_links import PASSWORD, shared_mode  # noqa: F401
from tests.conftest import CORPUS
from tests.web.test_numbers_text import hours_apart
from traces import models
from traces.services import set_ingest
from traces.services.prices import price_set
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

INSPECT = CORPUS / "inspect_ai_eval_log" / "2025-05-12T20-28-13-04-00_popularity.json"
CODEX = (
    CORPUS
    / "codex_rollout_jsonl"
    / ("rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl")
)
WIDTHS = (1280, 390)

BROKEN_CODES = """() => [...document.querySelectorAll('main .stop, main .outcome, main .status')]
  .filter(el => el.getClientRects().length > 1 || el.scrollWidth > el.clientWidth + 1)
  .map(el => el.textContent.trim())"""
"""Codes drawn on more than one line (broken inside), or clipped although they would fit."""


def overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def walk(page, name: str, focus=None) -> None:
    """At each width: nothing sticks out, no code breaks; screenshots light and dark of
    the screen showing `focus` (the part this test is about)."""
    folder = os.environ.get("INSPECTOR_SCREENSHOTS")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        if focus is not None:
            focus.evaluate("el => (el.closest('section') || el).scrollIntoView({block: 'center'})")
            page.wait_for_timeout(300)  # the charts above may still be settling
        assert overflow(page) <= 0, (name, width, page.evaluate(WIDEST))
        assert page.evaluate(BROKEN_CODES) == [], (name, width)
        if folder:
            for theme in ("light", "dark"):
                page.evaluate(f"document.documentElement.setAttribute('data-theme', '{theme}')")
                path = Path(folder) / f"{name}-{width}-{theme}.png"
                page.screenshot(path=str(path))
    page.set_viewport_size({"width": 1280, "height": 900})


@pytest.mark.corpus
def test_scores_costs_more_and_whole_codes_on_every_page(page):
    if not CORPUS.is_dir():
        pytest.skip(f"the public trace corpus is not present at {CORPUS}")
    run_set = set_ingest.set_upload(
        name="popularity", files=[(INSPECT.name, INSPECT.read_bytes())]
    ).run_set
    runs = list(run_set.runs.order_by("name"))
    page.goto(f"/traces/{runs[0].pk}/")
    scores = page.locator("#trace-scores")
    expect(scores).to_contain_text("match")
    expect(scores).to_contain_text(re.compile(r"[CI] \((in)?correct\)"))
    walk(page, "trace-scores", scores)

    page.goto(f"/sets/{run_set.pk}/")
    expect(page.locator("#set-scores")).to_contain_text("C (correct)")
    expect(page.locator("#set-scores")).to_contain_text("I (incorrect)")
    walk(page, "set-scores", page.locator("#set-scores"))

    page.goto(f"/compare/{runs[0].pk}/{runs[-1].pk}/")
    expect(page.locator('tr[data-score="match"]')).to_be_visible()
    walk(page, "compare-scores", page.locator("#compare-totals"))

    apart = trace_upload(files=[("apart.jsonl", hours_apart())], name="hours apart").trace
    page.goto(f"/traces/{apart.pk}/#what-if")
    row = page.locator('tr[data-scenario="prompt-cache"]')
    expect(row).to_contain_text(re.compile(r"costs \$[\d.]+ more \(\+[\d.]+%\)"))
    expect(row).not_to_contain_text("-$")
    walk(page, "what-if-costs-more", row)

    codex = trace_upload(files=[(CODEX.name, CODEX.read_bytes())], name="codex").trace
    page.goto(f"/traces/{codex.pk}/calls/2/")
    expect(page.locator(".message .role").first).to_be_visible()
    expect(page.locator("main")).not_to_contain_text("? message")
    walk(page, "call-codex", page.locator(".message").first)
    assert not page.js_errors


def test_the_audit_log_reads_names_and_the_zone(page, shared_mode):  # noqa: F811
    project = models.Project.objects.get(slug="research")
    price_set(who="alice", project=project, model="acme-9", values={"input": 1, "output": 2})
    page.goto("/")
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"/projects/{project.slug}/")
    audit = page.locator("table.audit")
    expect(audit).to_contain_text("Price set")
    expect(audit).to_contain_text("UTC")
    expect(audit).not_to_contain_text("price.set")
    walk(page, "audit-log", audit)
    assert not page.js_errors
