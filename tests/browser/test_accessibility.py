"""axe-core on every page (issue 24, part 6): each page of the phone walk, and the Codex
call page, notes, the what-if panel, the login and the team pages, in the light and the
dark theme, with every disclosure open, has no serious or critical violation.

axe-core is vendored beside the tests (tests/browser/vendor/axe-core/, never served) and
evaluated in the page through DevTools: the Content-Security-Policy refuses
`page.add_script_tag` (an inline script), and a page's policy does not govern what the
test evaluates. Failures are collected over the whole walk, so one run names them all.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders

from tests.browser.charts import wait_for_charts
from tests.browser.test_phone_widths import PASSWORD, PHONE, fixtures
from tests.conftest import corpus_files
from tests.core.whatif.traces import sundry_run
from tests.live.events import agent_lines
from traces import live, models
from traces.access.principals import Principal, digest_of
from traces.services.notes import note_add
from traces.services.upload import trace_upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")
DESKTOP = {"width": 1280, "height": 900}
CODEX = corpus_files("codex_rollout_jsonl", "*.jsonl")[:1]
NOTE = "**Root cause:** the `search` tool returned stale results, see [the runbook](https://runbooks.example/search)."

# Open every disclosure (so what it holds is audited too), then let charts and layout settle.
OPEN_ALL = """async () => {
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""
# The theme switch as the toggle does it: the attribute, then the event the charts redraw
# on; axe waits for the colours' transitions to end (mid-way, a box is neither theme).
SET_THEME = """async (theme) => {
  document.documentElement.setAttribute("data-theme", theme);
  document.dispatchEvent(new CustomEvent("themechange", { detail: theme }));
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const moving = document.getAnimations().filter((a) => a instanceof CSSTransition);
  await Promise.all(moving.map((a) => a.finished.catch(() => null)));
}"""
RUN_AXE = """async (serious) => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.filter((v) => serious.includes(v.impact)).map((v) => ({
    id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
    targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
    why: [...v.nodes[0].any, ...v.nodes[0].all, ...v.nodes[0].none].map((c) => c.message)[0] || "",
  }));
}"""


def violations(page, name: str, url: str) -> list[str]:
    """Serious and critical axe violations of `url`, one line each: at 1280 px in each
    theme, then at 390 px (the compact diagram, tables that scroll) in the light one."""
    page.set_viewport_size(DESKTOP)
    if url.endswith("/export.html"):  # an attachment: opened as the file it downloads
        page.set_content(page.request.get(url).text())
    else:
        answer = page.goto(url)
        if urlsplit(page.url).path != urlsplit(url).path:  # e.g. the login page: not audited
            return [f"{name} ({url}): answered {answer.status if answer else '?'} at {page.url}"]
    wait_for_charts(page, "[data-figure]")
    page.evaluate(AXE.read_text(encoding="utf-8"))
    page.evaluate(OPEN_ALL)
    found = []
    for width, theme in ((DESKTOP, "dark"), (DESKTOP, "light"), (PHONE, "light")):
        page.set_viewport_size(width)
        page.evaluate(SET_THEME, theme)
        for v in page.evaluate(RUN_AXE, list(SERIOUS)):
            found.append(
                f"{name} ({url}, {width['width']} px, {theme}): {v['id']} [{v['impact']}] "
                f"{v['help']}; {v['count']} node(s): {' | '.join(v['targets'])}; "
                f"first: {v['why']}"
            )
    return found


def walk(page, urls: dict[str, str]) -> list[str]:
    return [p for name, url in urls.items() if name[0] != "_" for p in violations(page, name, url)]


def test_the_csp_refuses_axe_as_a_script_tag(page):
    """Why the walk evaluates axe rather than adding a script tag."""
    page.goto("/rules/")
    with pytest.raises(Exception, match=r"(?i)content security policy"):
        page.add_script_tag(path=str(AXE))
    assert page.evaluate("typeof window.axe") == "undefined"
    page.evaluate(AXE.read_text(encoding="utf-8"))
    assert page.evaluate("axe.version") == "4.14.1"


def test_the_app_never_serves_axe_core(client):
    """Through the app's own URLs and static files (Django's client; the live test
    server also serves the working directory as MEDIA_ROOT, which no deployment does)."""
    assert finders.find("axe.min.js") is None
    assert finders.find("vendor/axe-core/axe.min.js") is None
    for path in (
        "/static/axe.min.js",
        "/static/js/axe.min.js",
        "/static/vendor/axe-core/axe.min.js",
        "/tests/browser/vendor/axe-core/axe.min.js",
    ):
        assert client.get(path).status_code == 404, path


def test_every_local_page_has_no_serious_violation(browser, live_server):
    urls = fixtures()
    trace = models.Trace.objects.get(pk=urls["_a"])
    note_add(who=Principal(), trace=trace, text=NOTE, root_cause=True, call_index=1)
    note_add(who=Principal(), trace=trace, text="Retried twice.", call_index=1)
    urls.update(machine="/machine/", prices="/projects/default/prices/")
    sundry = trace_upload(files=[("sundry.jsonl", sundry_run())], name="sundry").trace
    urls["what-if"] = f"/traces/{sundry.pk}/?cap:get_order=340#what-if"
    urls["findings by rule"] = f"/traces/{sundry.pk}/postmortem"
    urls["export"] = f"/traces/{urls['_a']}/export.html"
    growing = live.create_live_trace(name="live run")
    live.append_lines(trace_id=growing.pk, offset=0, lines=agent_lines(3, finish=False))
    urls["live trace"] = f"/traces/{growing.pk}/"
    urls["capture waiting"] = "/proxy/s/w10b-demo/"
    for path in CODEX:
        codex = trace_upload(files=[(path.name, path.read_bytes())], name=path.name).trace
        urls["codex call"] = f"/traces/{codex.pk}/calls/2/"
    context = browser.new_context(viewport=DESKTOP, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(30_000)
    found = walk(page, urls)
    context.close()
    assert not found, "\n".join(found)


def test_every_team_page_has_no_serious_violation(browser, live_server, settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = get_user_model().objects.create_user("alice", password=PASSWORD)
    get_user_model().objects.create_superuser("root", password=PASSWORD)
    project = models.Project.objects.create(slug="research", name="Research agents")
    models.Membership.objects.create(project=project, user=user, role="owner")
    urls = fixtures(project)
    trace = models.Trace.objects.get(pk=urls["_a"])
    note_add(who=Principal(user=user), trace=trace, text=NOTE, root_cause=True, call_index=1)
    secret = secrets.token_urlsafe(24)
    models.ShareLink.objects.create(
        trace_id=urls["_a"], prefix=secret[:6], digest=digest_of(secret), created_by=user
    )
    context = browser.new_context(viewport=DESKTOP, base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(30_000)
    found = walk(page, {"login": "/accounts/login/"})
    page.goto(f"/s/{secret}")  # a share-link visitor: the trace and its calls, read-only
    found += walk(
        page,
        {"shared trace": f"/traces/{urls['_a']}/", "shared call": f"/traces/{urls['_a']}/calls/1/"},
    )
    page.context.clear_cookies()

    def log_in(username: str) -> None:
        page.goto("/accounts/login/")
        page.get_by_label("User name").fill(username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(lambda url: "/accounts/login" not in url)

    log_in("root")  # no project yet: the Create-your-first-project page
    found += walk(page, {"first project": page.url})
    page.context.clear_cookies()
    log_in("alice")
    urls.update(
        projects="/projects/",
        project="/projects/research/",
        prices="/projects/research/prices/",
        tokens="/tokens/",
        share=f"/traces/{urls['_a']}/share",
        password="/accounts/password/",
    )
    found += walk(page, urls)
    context.close()
    assert not found, "\n".join(found)
