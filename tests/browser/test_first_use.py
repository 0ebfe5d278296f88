"""No dead ends (issue 24, item 7), in a real browser: a first login in team mode leads to
creating a project (with the sample), read-only visitors see no edit controls, the upload
form's visible file field is the trace's, and compare's errors are styled pages that say
what was not found or list the runs a name could mean. Screenshots (light and dark, 1280
and 390 px) go to $INSPECTOR_SCREENSHOTS when it is set."""

from __future__ import annotations

import secrets

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from tests.browser.test_share_links import shoot
from traces import models
from traces.access.principals import digest_of
from traces.core.reading.sample import sample_bytes, serial_sample_bytes
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long enough passphrase 13"


def shoot_both(page, name: str) -> None:
    shoot(page, f"{name}-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    shoot(page, f"{name}-390")
    page.set_viewport_size({"width": 1280, "height": 900})


def log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


@pytest.fixture
def team(settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_a_first_superuser_is_led_to_create_a_project_with_the_sample(page, team):
    get_user_model().objects.create_superuser("root", password=PASSWORD)
    log_in(page, "root")
    expect(page.get_by_role("heading", name="Create your first project")).to_be_visible()
    expect(page.get_by_text("No access")).to_have_count(0)
    shoot_both(page, "first-project")
    page.get_by_label("Project name").fill("Research agents")
    expect(page.get_by_label("Import the bundled sample trace")).to_be_checked()
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", name="Sample: a small parallel tool loop")).to_be_visible()
    assert models.Trace.objects.get().project.slug == "research-agents"
    page.goto("/")
    expect(page.locator("table.trace-list tbody tr")).to_have_count(1)
    assert not [e for e in page.js_errors if "403" not in e]  # the first page is a 403


def test_viewers_and_share_link_visitors_see_no_edit_controls(page, browser, live_server, team):
    project = models.Project.objects.create(slug="research", name="Research agents")
    viewer = get_user_model().objects.create_user("vera", password=PASSWORD)
    models.Membership.objects.create(project=project, user=viewer, role="viewer")
    trace = trace_upload(
        files=[("", sample_bytes())], name="nightly", project=project, labels=["baseline"]
    ).trace
    log_in(page, "vera")
    page.goto(f"/traces/{trace.pk}/")
    expect(page.get_by_role("heading", name="nightly")).to_be_visible()
    expect(page.get_by_role("button", name="Save labels")).to_have_count(0)
    expect(page.locator("#labels")).to_contain_text("baseline")
    expect(page.get_by_role("button", name="Compare", exact=True)).to_be_visible()  # may read

    secret = secrets.token_urlsafe(24)
    models.ShareLink.objects.create(trace=trace, prefix=secret[:6], digest=digest_of(secret))
    stranger = browser.new_context(base_url=live_server.url)
    other = stranger.new_page()
    other.goto(f"/s/{secret}")
    expect(other.get_by_role("heading", name="nightly")).to_be_visible()
    expect(other.get_by_role("button", name="Save labels")).to_have_count(0)
    expect(other.get_by_role("button", name="Compare", exact=True)).to_have_count(0)
    expect(other.get_by_role("form", name="Compare with another run")).to_have_count(0)
    stranger.close()


def test_the_upload_forms_visible_file_field_is_the_trace(page):
    page.goto("/")
    trace_field = page.get_by_label("Trace files")
    expect(trace_field).to_be_visible()
    assert trace_field.get_attribute("id") == "id_file"
    mapping = page.locator("#id_mapping")
    expect(mapping).to_be_hidden()  # secondary: behind "Add a mapping"
    shoot_both(page, "upload-form")
    page.get_by_text("A log of your own format? Add a mapping").click()
    expect(page.get_by_label("Mapping file")).to_be_visible()
    trace_field.set_input_files(
        files=[{"name": "run.jsonl", "mimeType": "application/x-ndjson", "buffer": sample_bytes()}]
    )
    # The progress list is transient (a small upload can finish before it is
    # looked at), so the lasting proof is where the upload lands: the trace's
    # own page, named after the file given to the trace field.
    page.wait_for_url(lambda url: "/traces/" in url)
    expect(page.get_by_role("heading", level=1)).to_have_text("run.jsonl")
    assert models.Trace.objects.count() == 1


def test_compare_errors_are_pages_that_say_what_and_list_candidates(page):
    first = trace_upload(files=[("", sample_bytes())], name="baseline").trace
    twin_a = trace_upload(files=[("", serial_sample_bytes())], name="nightly").trace
    twin_b = trace_upload(files=[("a.jsonl", sample_bytes())], name="nightly").trace

    response = page.goto("/compare/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Nothing to compare")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("the first is missing")
    expect(page.locator(".topbar")).to_be_visible()  # the app's page, not Django's bare 404

    response = page.goto(f"/compare/?a={first.pk}&b=no+such+run")
    assert response.status == 404
    expect(page.get_by_role("alert")).to_contain_text("No trace with the id or name “no such run”")
    shoot_both(page, "compare-unknown")

    page.goto(f"/traces/{first.pk}/")
    page.get_by_label("Compare with", exact=True).fill("nightly")
    page.get_by_role("button", name="Compare", exact=True).click()
    expect(page.get_by_role("heading", name="Which run is “nightly”?")).to_be_visible()
    rows = page.locator("#compare-candidates tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#compare-candidates")).to_contain_text(str(twin_a.pk))
    expect(page.locator("#compare-candidates")).to_contain_text(str(twin_b.pk))
    shoot_both(page, "compare-candidates")
    rows.filter(has_text=str(twin_a.pk)).get_by_role("link").click()
    expect(page.get_by_role("heading", name="Two runs side by side")).to_be_visible()
    assert page.url.endswith(f"/compare/{first.pk}/{twin_a.pk}/")
    shoot_both(page, "compare")

    response = page.goto("/traces/00000000-0000-4000-8000-000000000000/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("No such trace")
    shoot_both(page, "not-found")
    assert not [e for e in page.js_errors if "404" not in e]
