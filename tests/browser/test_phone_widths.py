"""Every page fits a 390 px phone (issue 24, item 3): walked in local and shared mode, in
the light and the dark theme, each page must be no wider than the viewport, and the
header's controls (Upload, Log out, the theme toggle) must be on screen. Failures are
collected over the whole walk, so one run names every page that overflows."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from traces import models
from traces.access.principals import digest_of
from traces.core.reading.sample import sample_bytes, serial_sample_bytes
from traces.services import set_ingest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a long enough passphrase 13"
PHONE = {"width": 390, "height": 844}
CONTROLS = (".topbar .theme-toggle", ".topbar .account button", "#upload-form [type=submit]")
WIDEST = """() => {
  const over = (el) => el.getBoundingClientRect().right > innerWidth + 1;
  const clipped = (el) => {
    for (let up = el.parentElement; up; up = up.parentElement) {
      if (up === document.body) return false;
      if (getComputedStyle(up).overflowX !== "visible" && !over(up)) return true;
    }
    return false;
  };
  const all = [...document.body.querySelectorAll("*")].filter((el) => over(el) && !clipped(el));
  const leaves = all.filter((el) => !all.some((other) => other !== el && el.contains(other)));
  return leaves.slice(0, 3).map((el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : ""));
}"""
MISSING = "00000000-0000-4000-8000-000000000000"


def fixtures(project: models.Project | None = None) -> dict[str, str]:
    """A set of two runs with long names, and the URLs of every page that shows them."""
    long_name = "nightly-" + "x" * 90 + ".jsonl"
    run_set = set_ingest.set_upload(
        name="calendar " + "y" * 60,
        files=[(long_name, sample_bytes()), ("serial.jsonl", serial_sample_bytes())],
        project=project,
    ).run_set
    a = run_set.runs.get(name=long_name)
    b = run_set.runs.get(name="serial.jsonl")
    other = set_ingest.set_upload(
        name="second set", files=[("again.jsonl", sample_bytes())], project=project
    ).run_set
    return {
        "list": "/",
        "trace": f"/traces/{a.pk}/",
        "call": f"/traces/{a.pk}/calls/1/",
        "postmortem": f"/traces/{a.pk}/postmortem",
        "compare": f"/compare/{a.pk}/{b.pk}/",
        "compare sets": f"/compare/sets/{run_set.pk}/{other.pk}/",
        "compare unknown": f"/compare/?a={a.pk}&b=no+such+run",
        "compare missing": "/compare/",
        "sets": "/sets/",
        "set": f"/sets/{run_set.pk}/",
        "rules": "/rules/",
        "rule": "/rules/dangling-tool-call/",
        "usage": "/usage/",
        "not found": f"/traces/{MISSING}/",
        "_a": str(a.pk),
    }


def problems(page, name: str, url: str) -> list[str]:
    """What is off-screen on `url` at 390 px, in each theme (screenshots of each go to
    $INSPECTOR_SCREENSHOTS when it is set)."""
    page.goto(url)
    found = []
    for theme in ("light", "dark"):
        page.evaluate(f"document.documentElement.setAttribute('data-theme', '{theme}')")
        folder = os.environ.get("INSPECTOR_SCREENSHOTS")
        if folder:
            slug = re.sub(r"[^a-z]+", "-", name)
            page.screenshot(path=str(Path(folder) / f"phone-{slug}-{theme}.png"), full_page=True)
        extra = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        if extra > 0:
            widest = ", ".join(page.evaluate(WIDEST))
            found.append(f"{name} ({url}, {theme}): {extra} px too wide ({widest})")
        for selector in CONTROLS:
            for box in [el.bounding_box() for el in page.locator(selector).all()]:
                if box and (box["x"] < 0 or box["x"] + box["width"] > PHONE["width"]):
                    found.append(f"{name} ({url}, {theme}): {selector} off-screen at {box}")
    return found


def test_every_local_page_fits_a_phone(browser, live_server):
    urls = fixtures()
    urls.update(
        machine="/machine/",
        prices="/projects/default/prices/",
        whatif=f"/traces/{urls['_a']}/#what-if",
    )
    context = browser.new_context(viewport=PHONE, base_url=live_server.url)
    page = context.new_page()
    found = [p for name, url in urls.items() if name[0] != "_" for p in problems(page, name, url)]
    context.close()
    assert not found, "\n".join(found)


def test_every_shared_page_fits_a_phone(browser, live_server, settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = get_user_model().objects.create_user("alice-with-a-long-user-name", password=PASSWORD)
    project = models.Project.objects.create(slug="research", name="Research agents")
    models.Membership.objects.create(project=project, user=user, role="owner")
    urls = fixtures(project)
    secret = secrets.token_urlsafe(24)
    models.ShareLink.objects.create(
        trace_id=urls["_a"], prefix=secret[:6], digest=digest_of(secret), created_by=user
    )
    context = browser.new_context(viewport=PHONE, base_url=live_server.url)
    page = context.new_page()
    found = problems(page, "login", "/accounts/login/")
    found += problems(page, "share link", f"/s/{secret}")
    page.goto("/accounts/login/")
    page.get_by_label("User name").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/accounts/login" not in url)
    urls.update(
        projects="/projects/",
        project="/projects/research/",
        prices="/projects/research/prices/",
        tokens="/tokens/",
        share=f"/traces/{urls['_a']}/share",
        password="/accounts/password/",
    )
    found += [p for name, url in urls.items() if name[0] != "_" for p in problems(page, name, url)]
    context.close()
    assert not found, "\n".join(found)
