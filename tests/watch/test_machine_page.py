"""The "On this machine" page on a fake home: the stores with their counts, "Import and
keep watching" (a real thread of this process, real database), Stop, and who may see it
(local mode on loopback only)."""

from __future__ import annotations

import time

import pytest
from django.http import Http404
from django.test import Client, RequestFactory

from tests.watch.fakehome import build_home
from traces import models
from traces.core.discovery import STORES
from traces.live.machine import MachineWatcher
from traces.pages.machine import machine
from traces.stores import store

pytestmark = pytest.mark.django_db(transaction=True)  # the watcher's thread sees the rows


@pytest.fixture
def fake(tmp_path, corpus, agents, monkeypatch):
    """The process's HOME is a fake one; no store's variable points elsewhere."""
    fake = build_home(tmp_path / "home", corpus, agents)
    monkeypatch.setenv("HOME", str(fake.home))
    for known in STORES:
        monkeypatch.delenv(known.env, raising=False)
    return fake


@pytest.fixture
def watcher(settings):
    settings.INSPECTOR = {"WATCH_INTERVAL_SECONDS": 0.2}
    found = store(MachineWatcher)
    yield found
    found.clear()


def card(page: str, key: str) -> str:
    """The HTML of one store's card (or line of the not-found list)."""
    start = page.index(f'id="store-{key}"')
    end = min(i for i in (page.find("</section>", start), page.find("</li>", start)) if i > 0)
    return page[start:end]


def wait_for_pass(watcher: MachineWatcher, key: str, passes: int = 1) -> None:
    deadline = time.monotonic() + 60
    while (watch := watcher.status().get(key)) is None or watch.passes < passes:
        assert time.monotonic() < deadline, f"no pass of {key} within 60 s"
        time.sleep(0.05)


def test_the_page_lists_every_store_with_its_sessions_and_starts_nothing(client, fake, watcher):
    page = client.get("/machine/").content.decode()
    assert '<a href="/machine/">On this machine</a>' in page  # the header links to it
    claude = card(page, "claude-code")
    assert "<code>~/.claude/projects</code>" in claude
    assert "<dt>Sessions</dt><dd>2</dd>" in claude and "<dt>Imported</dt><dd>0</dd>" in claude
    assert 'value="watch"' in claude and "Import and keep watching" in claude
    codex = card(page, "codex")
    assert "<dt>Sessions</dt><dd>2</dd>" in codex
    goose = card(page, "goose")  # not on this machine: the folder looked in, the variable
    assert "~/.local/share/goose/sessions" in goose and "$GOOSE_SESSIONS_DIR" in goose
    assert 'value="watch"' not in goose
    assert f"{len(fake.sessions)} sessions in 10 stores, 0 imported" in page
    assert page.count('class="store-card') == 10
    aider = card(page, "aider")  # histories in the repositories below the home
    assert "<dt>Sessions</dt><dd>1</dd>" in aider and 'value="watch"' in aider
    assert "<code>~/code/aider-fixtures</code>" in aider
    # Showing the page reads nothing in and starts no watching.
    assert models.Trace.objects.count() == 0 and models.WatchedSession.objects.count() == 0
    assert watcher.status() == {} and not watcher.running()


def test_import_and_keep_watching_imports_one_store_then_stop_ends_the_thread(
    client, fake, watcher, corpus
):
    response = client.post("/machine/", {"store": "claude-code", "action": "watch"})
    assert response.status_code == 302 and response["Location"] == "/machine/#store-claude-code"
    wait_for_pass(watcher, "claude-code")
    rows = models.WatchedSession.objects.filter(store="claude-code")
    claude = {str(fake.sessions["claude-tool-heavy"]), str(fake.sessions["claude-short"])}
    assert {row.path for row in rows} == claude
    assert models.WatchedSession.objects.exclude(store="claude-code").count() == 0  # one store
    traces = models.Trace.objects.filter(agent="Claude Code")
    assert traces.count() == 2 and all(t.calls_count > 0 for t in traces)

    page = client.get("/machine/").content.decode()
    assert "Importing Claude Code sessions, then watching for more." in page  # the flash
    claude_card = card(page, "claude-code")
    assert "Watching since" in claude_card and "2 imported" in claude_card
    assert '<dt>Imported</dt><dd><a href="/?agent=Claude+Code">2</a></dd>' in claude_card
    assert 'value="stop"' in claude_card and 'value="watch"' not in claude_card
    assert 'data-refresh-seconds="10"' in page  # the counts refresh while watching
    assert "js/machine_refresh" in page and 'http-equiv="refresh"' not in page
    assert 'value="watch"' in card(page, "codex")

    # A new session in the watched store is imported by a later pass, nothing twice.
    new = fake.home / ".claude/projects/-work-other/subagent.jsonl"
    new.parent.mkdir()
    new.write_bytes((corpus / "claude_code_jsonl/spotter/subagent.jsonl").read_bytes())
    passes = watcher.status()["claude-code"].passes
    wait_for_pass(watcher, "claude-code", passes + 2)
    assert models.Trace.objects.filter(agent="Claude Code").count() == 3
    assert watcher.status()["claude-code"].imported == 3

    response = client.post("/machine/", {"store": "claude-code", "action": "stop"})
    assert response.status_code == 302
    deadline = time.monotonic() + 30
    while watcher.running():
        assert time.monotonic() < deadline, "the watching thread did not end"
        time.sleep(0.05)
    page = client.get("/machine/").content.decode()
    assert "Stopped watching Claude Code." in page
    assert "Watching since" not in page and "data-refresh-seconds" not in page
    assert "js/machine_refresh" not in page
    assert "<dt>Imported</dt>" in card(page, "claude-code") and 'value="watch"' in page
    assert models.Trace.objects.count() == 3  # the traces stay


def test_a_stores_unreadable_session_and_a_moved_store_are_shown_escaped(
    client, fake, watcher, tmp_path, monkeypatch
):
    broken = fake.home / ".continue/sessions/broken.json"
    broken.write_bytes(b'{"sessionId": "x", "history": [')
    hostile = tmp_path / "<img src=x onerror=alert(1)>"
    hostile.mkdir()
    monkeypatch.setenv("GOOSE_SESSIONS_DIR", str(hostile))
    client.post("/machine/", {"store": "continue", "action": "watch"})
    wait_for_pass(watcher, "continue")
    page = client.get("/machine/").content.decode()
    continued = card(page, "continue")
    assert "~/.continue/sessions/broken.json" in continued  # the last error, and its file
    assert "<dt>Unreadable</dt>" in continued
    row = models.WatchedSession.objects.get(path=str(broken))
    assert row.error and row.error[:40] in continued.replace("&#x27;", "'").replace("&quot;", '"')
    goose = card(page, "goose")  # found through its variable: a folder without sessions
    assert "&lt;img src=x onerror=alert(1)&gt;" in goose and "<img src=x" not in page
    assert "(from <code>$GOOSE_SESSIONS_DIR</code>)" in goose


def test_a_post_needs_a_known_store_an_action_and_the_csrf_token(client, fake, watcher):
    assert client.post("/machine/", {"store": "nope", "action": "watch"}).status_code == 400
    assert client.post("/machine/", {"store": "codex", "action": "go"}).status_code == 400
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/machine/", {"store": "codex", "action": "watch"}).status_code == 403
    assert watcher.status() == {} and not watcher.running()


def test_shared_mode_answers_as_if_there_were_no_such_page(client, fake, watcher, settings):
    settings.INSPECTOR_AUTH = True
    assert client.get("/machine/").status_code == 404
    assert client.post("/machine/", {"store": "codex", "action": "watch"}).status_code == 404
    assert watcher.status() == {} and not watcher.running()
    assert "On this machine" not in client.get("/accounts/login/").content.decode()


def test_another_address_never_gets_the_page_even_in_local_mode(fake, watcher):
    factory = RequestFactory(REMOTE_ADDR="192.168.1.20")
    with pytest.raises(Http404):  # the rule itself, without the middleware in front
        machine(factory.get("/machine/", HTTP_ACCEPT="text/html"))
    request = factory.post("/machine/", {"store": "codex", "action": "watch"})
    request._dont_enforce_csrf_checks = True
    response = machine(request)  # a script (no Accept: text/html) gets the JSON 404
    assert response.status_code == 404 and request.access_denied == "not found"
    # Through the whole stack the local-mode guard refuses it first.
    remote = Client(REMOTE_ADDR="192.168.1.20")
    assert remote.get("/machine/").status_code == 403
    assert watcher.status() == {} and not watcher.running()
    loopback = RequestFactory().get("/machine/", REMOTE_ADDR="::1")
    loopback.user = None
    assert machine(loopback).status_code == 200


def test_process_exit_stops_the_watching_between_two_sessions(fake, watcher):
    """What the atexit hook calls: every watch stopped, the thread joined."""
    watcher.start("codex", home=fake.home, env={})
    watcher.start("gemini-cli", home=fake.home, env={})
    assert watcher.running()
    watcher.clear()
    assert not watcher.running() and watcher.status() == {}
    imported = models.WatchedSession.objects.count()
    time.sleep(0.5)
    assert models.WatchedSession.objects.count() == imported  # nothing after the stop
