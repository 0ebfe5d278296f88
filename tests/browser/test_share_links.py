"""Shared mode in a real browser: log in, upload, share a trace with someone who has no
account, revoke the link, and see it refused. Screenshots of the new pages (light and
dark) go to $INSPECTOR_SCREENSHOTS when it is set."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long enough passphrase 13"


def shoot(page, name: str) -> None:
    folder = os.environ.get("INSPECTOR_SCREENSHOTS")
    if not folder:
        return
    for theme in ("light", "dark"):
        page.evaluate(f"document.documentElement.setAttribute('data-theme', '{theme}')")
        page.screenshot(path=str(Path(folder) / f"{name}-{theme}.png"), full_page=True)


@pytest.fixture
def shared_mode(settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = get_user_model().objects.create_user("alice", password=PASSWORD)
    project = models.Project.objects.create(slug="research", name="Research agents")
    models.Membership.objects.create(project=project, user=user, role="owner")
    return user


def test_log_in_upload_share_open_without_account_revoke_refused(
    page, browser, live_server, shared_mode, tmp_path
):
    lines = [orjson.loads(line) for line in agent_lines(3)]
    lines[1]["headers"] = {"x-api-key": "sk-ant-api03-notforyoureyes0123456789"}
    trace_file = tmp_path / "nightly-run.jsonl"
    trace_file.write_bytes(ndjson([orjson.dumps(line) for line in lines]))

    page.goto("/")  # shared mode: the login page first
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    shoot(page, "login")
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Look inside a tool-call loop")).to_be_visible()

    page.locator("#id_file").set_input_files(str(trace_file))
    # Reading, redacting and storing the upload can take more than 5 s on a loaded machine.
    expect(page.get_by_role("heading", name="nightly-run.jsonl")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("note")).to_contain_text("The original was redacted at upload")
    shoot(page, "trace-redacted")
    trace_url = page.url
    page.get_by_role("link", name="Share").click()
    page.get_by_role("button", name="Create share link").click()
    share_url = page.locator("#share-url").inner_text().strip()
    assert "/s/" in share_url
    shoot(page, "share")

    stranger = browser.new_context(base_url=live_server.url)
    other = stranger.new_page()
    other.goto(trace_url)  # no account, no link: refused
    expect(other.get_by_role("heading", name="Log in")).to_be_visible()
    other.goto(share_url)
    expect(other.get_by_role("heading", name="nightly-run.jsonl")).to_be_visible()
    expect(other.locator("table.calls tbody tr")).to_have_count(3)
    expect(other.get_by_role("link", name="Download original")).to_have_count(0)
    other.get_by_role("link", name="Post-mortem").first.click()
    expect(other).to_have_url(f"{trace_url}postmortem")

    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Share link revoked")).to_be_visible()

    other.goto(trace_url)  # the link opened before no longer lets the stranger in
    expect(other.get_by_role("heading", name="Log in")).to_be_visible()
    fresh = browser.new_context(base_url=live_server.url).new_page()
    response = fresh.goto(share_url)
    assert response.status == 410
    expect(fresh.get_by_text("This share link was revoked or has expired.")).to_be_visible()
    shoot(fresh, "share-revoked")
    stranger.close()
    fresh.context.close()
    assert page.js_errors == []


def test_token_project_and_delete_pages(page, shared_mode):
    page.goto("/accounts/login/")
    page.get_by_label("User name").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Tokens").click()
    page.get_by_label("Name").fill("ci-agent")
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("#new-token").inner_text().strip()
    assert secret.startswith("li_")
    token = models.ApiToken.objects.get(name="ci-agent")
    assert token.digest != secret and secret not in token.digest  # only the hash is kept
    shoot(page, "tokens")
    page.get_by_role("button", name="Revoke").click()
    expect(page.locator("table.data .badge-error")).to_have_text("revoked")

    page.get_by_role("link", name="Projects").click()
    shoot(page, "projects")
    page.get_by_role("link", name="Research agents").click()
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    expect(page.locator("table.audit")).to_contain_text(
        "API token revoked"
    )  # its name, not its code
    shoot(page, "project")

    page.goto("/accounts/password/")
    shoot(page, "password")

    trace = trace_upload(
        files=[("", ndjson(agent_lines(2)))],
        name="to delete",
        project=models.Project.objects.get(slug="research"),
    ).trace
    page.goto(f"/traces/{trace.pk}/")
    page.get_by_role("link", name="Delete").click()
    shoot(page, "delete")
    page.get_by_role("button", name="Delete the trace").click()
    expect(page.get_by_text("Deleted to delete.")).to_be_visible()
    assert not models.Trace.objects.filter(pk=trace.pk).exists()
    assert page.js_errors == []
