"""Notes in a real browser (issue 27): a member adds a root-cause note on a call with
JavaScript off (the form is plain HTML), and sees it lead the post-mortem page, rendered
and escaped, in both themes and on a phone. Screenshots go to $INSPECTOR_SCREENSHOTS."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.browser.test_share_links import shoot
from tests.live.events import agent_lines, ndjson
from traces import models
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long enough passphrase 13"
NOTE = (
    "**Root cause:** the `search` tool returned stale results, see "
    "[the runbook](https://runbooks.example/search). <script>window.pwned=1</script> "
    "[x](javascript:window.pwned=2)"
)


def log_in(page) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Look inside a tool-call loop")).to_be_visible()


def test_a_member_adds_a_root_cause_note_and_sees_it_on_the_postmortem(
    page, browser, live_server, settings
):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = get_user_model().objects.create_user("alice", password=PASSWORD)
    project = models.Project.objects.create(slug="research", name="Research agents")
    models.Membership.objects.create(project=project, user=user, role="member")
    trace = trace_upload(
        files=[("nightly.jsonl", ndjson(agent_lines(3)))], name="nightly.jsonl", project=project
    ).trace

    # Without JavaScript: the plain form, its CSRF token, the redirect back.
    no_js = browser.new_context(java_script_enabled=False, base_url=live_server.url)
    plain = no_js.new_page()
    log_in(plain)
    plain.goto(f"/traces/{trace.pk}/calls/2/")
    plain.get_by_label("Add a note on this call").fill(NOTE)
    plain.locator("#notes").get_by_label("The root cause").check()
    plain.locator("#notes").get_by_role("button", name="Add note").click()
    expect(plain).to_have_url(f"{live_server.url}/traces/{trace.pk}/calls/2/#notes")
    expect(plain.locator("#notes .note-text strong")).to_have_text("Root cause:")
    no_js.close()
    assert models.AuditEvent.objects.filter(action="note.add", user=user).count() == 1

    log_in(page)
    page.goto(f"/traces/{trace.pk}/postmortem")
    notes = page.locator("#notes")
    expect(notes.locator(".note-root .badge")).to_have_text("root cause")
    expect(notes.locator(".note-meta")).to_contain_text("call 2 · alice")
    link = notes.get_by_role("link", name="the runbook")
    expect(link).to_have_attribute("href", "https://runbooks.example/search")
    expect(link).to_have_attribute("rel", "nofollow noopener noreferrer")
    expect(notes.locator(".note-text")).to_contain_text("<script>window.pwned=1</script>")
    expect(notes.locator(".note-text")).to_contain_text("[x](javascript:window.pwned=2)")
    assert page.evaluate("window.pwned") is None
    assert notes.locator(".note-text a").count() == 1
    assert not page.js_errors, page.js_errors
    shoot(page, "postmortem-notes")
    page.goto(f"/traces/{trace.pk}/calls/2/")
    page.locator(".note-add summary").first.click()
    expect(page.get_by_label("Note on this tool run").first).to_be_visible()
    shoot(page, "call-notes")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/traces/{trace.pk}/postmortem#notes")
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, overflow
    shoot(page, "postmortem-notes-phone")
