"""Notes on calls and tool runs (issue 27 item 4): the forms, where notes show, roles and
the audit log in shared mode, and hostile Markdown inert on every page and export."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from markdown_it import MarkdownIt

from tests.core.test_notes import HOSTILE_NOTES, assert_inert, elements
from tests.live.events import agent_lines, ndjson
from tests.web.team_world import build_world
from traces import models
from traces.core.outputs.notes import MAX_NOTE_CHARS

pytestmark = pytest.mark.django_db

HOSTILE = "\n\n".join(HOSTILE_NOTES)
NOTE_TEXT = re.compile(r'<div class="note-text">(.*?)</div>', re.S)


def upload(client, name: str = "run.jsonl", calls: int = 3) -> str:
    data = ndjson(agent_lines(calls))
    reply = client.post(reverse("traces:api-traces"), {"file": SimpleUploadedFile(name, data)})
    assert reply.status_code == 201, reply.content
    return reply.json()["id"]


def add(client, trace_id, **fields):
    return client.post(reverse("traces:notes", args=[trace_id]), fields)


def page(client, name: str, *args) -> str:
    response = client.get(reverse(name, args=args))
    assert response.status_code == 200
    return response.content.decode()


def assert_page_inert(html: str) -> None:
    """The notes' HTML holds only text markup, and the page no script of theirs."""
    rendered = NOTE_TEXT.findall(html)
    assert rendered, "no note on the page"
    for fragment in rendered:
        assert_inert(fragment)
    assert "window.pwned" not in "".join(
        text for text in re.findall(r"<script[^>]*>(.*?)</script>", html, re.S)
    )
    for tag, attrs in elements(html):
        assert not any(name.startswith("on") for name, _ in attrs), (tag, attrs)
        assert tag not in {"img", "svg"} or not any(
            (value or "").startswith(("data:", "javascript:")) for _, value in attrs
        )


def test_a_note_on_a_call_shows_on_the_call_trace_and_postmortem_pages(client):
    trace_id = upload(client)
    reply = add(client, trace_id, call="2", text="The **search** result was `stale`.")
    assert reply.status_code == 302
    assert reply["Location"] == reverse("traces:call", args=[trace_id, 2]) + "#notes"
    note = models.Note.objects.get()
    assert (note.call_index, note.author_label, note.author) == (2, "", None)  # local mode
    for html in (
        page(client, "traces:call", trace_id, 2),
        page(client, "traces:detail", trace_id),
        page(client, "traces:postmortem", trace_id),
    ):
        assert "<strong>search</strong> result was <code>stale</code>" in html
        assert f'<time datetime="{note.created_at:%Y-%m-%dT%H:%M:%SZ}">' in html
    # On another call's page it does not show.
    assert "stale" not in page(client, "traces:call", trace_id, 1)


def test_a_tool_run_marked_as_the_root_cause_leads_the_postmortem_and_exports(client):
    trace_id = upload(client)
    call_html = page(client, "traces:call", trace_id, 2)
    assert 'name="tool_run" value="toolu_001"' in call_html  # the form on the run's row
    add(client, trace_id, call="1", text="An aside.")
    reply = add(client, trace_id, call="2", tool_run="toolu_001", root_cause="on", text="")
    assert reply["Location"] == reverse("traces:call", args=[trace_id, 2]) + "#notes"
    html = page(client, "traces:postmortem", trace_id)
    notes = html[html.index('id="notes"') :]
    assert notes.index("root cause") < notes.index("An aside.")
    # A tool run's note belongs to the call that asked for it, and shows on both pages.
    assert "tool run toolu_001 (call 1)" in notes
    for index in (1, 2):
        assert "tool run toolu_001 (call 1)" in page(client, "traces:call", trace_id, index)
    assert "tool run toolu_001" not in page(client, "traces:call", trace_id, 3)
    markdown = page(client, "traces:export-md", trace_id)
    assert "- **Root cause** on `tool run toolu_001 (call 1)`" in markdown
    assert markdown.index("Root cause") < markdown.index("An aside.")
    export = client.get(reverse("traces:export-html", args=[trace_id])).content.decode()
    assert '<span class="badge badge-error">root cause</span>' in export
    assert "<p>An aside.</p>" in export


def test_refusals_are_clear_and_store_nothing(client):
    trace_id = upload(client)
    too_long = add(client, trace_id, text="x" * (MAX_NOTE_CHARS + 1))
    assert too_long.status_code == 400
    assert "at most 10,000 characters; this one has 10,001" in too_long.content.decode()
    huge = add(client, trace_id, text="<b>" * 1_000_000)  # refused before it is parsed
    assert huge.status_code == 400
    assert "A note holds at most 10,000 characters." in huge.content.decode()
    assert "Write a note" in add(client, trace_id, text="   ").content.decode()
    assert "no call 99" in add(client, trace_id, call="99", text="a").content.decode()
    assert "no such tool run" in add(client, trace_id, tool_run="nope", text="a").content.decode()
    assert not models.Note.objects.exists()


def test_deleting_the_trace_deletes_its_notes(client):
    trace_id = upload(client)
    add(client, trace_id, text="gone with it")
    assert client.post(reverse("team:delete", args=[trace_id])).status_code == 302
    assert not models.Note.objects.exists()


def test_edit_and_delete(client):
    trace_id = upload(client)
    add(client, trace_id, text="first")
    note = models.Note.objects.get()
    url = reverse("traces:note", args=[trace_id, note.pk])
    reply = client.post(url, {"text": "second", "root_cause": "on", "next": "postmortem"})
    assert reply["Location"] == reverse("traces:postmortem", args=[trace_id]) + "#notes"
    note.refresh_from_db()
    assert (note.text, note.root_cause) == ("second", True)
    other = upload(client, "other.jsonl")
    assert client.post(reverse("traces:note", args=[other, note.pk]), {}).status_code == 404
    client.post(url, {"action": "delete", "next": "https://evil.example/"})
    assert not models.Note.objects.exists()
    actions = list(
        models.AuditEvent.objects.filter(action__startswith="note.").values_list(
            "action", flat=True
        )
    )
    assert sorted(actions) == ["note.add", "note.delete", "note.edit"]


def test_the_forms_need_the_csrf_token():
    csrf_client = Client(enforce_csrf_checks=True)
    trace_id = upload(csrf_client)
    assert add(csrf_client, trace_id, text="a").status_code == 403
    html = page(csrf_client, "traces:postmortem", trace_id)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    assert add(csrf_client, trace_id, text="a", csrfmiddlewaretoken=token).status_code == 302


def test_hostile_markdown_is_inert_on_every_page_and_export(client):
    trace_id = upload(client)
    other = upload(client, "other.jsonl")
    assert add(client, trace_id, call="2", root_cause="on", text=HOSTILE).status_code == 302
    assert add(client, trace_id, text=HOSTILE).status_code == 302
    for html in (
        page(client, "traces:call", trace_id, 2),
        page(client, "traces:detail", trace_id),
        page(client, "traces:postmortem", trace_id),
        page(client, "traces:compare", trace_id, other),
    ):
        assert_page_inert(html)
    export = client.get(reverse("traces:export-html", args=[trace_id])).content.decode()
    assert_page_inert(export)
    assert "<script" not in export  # the export has no script at all
    markdown = page(client, "traces:export-md", trace_id)
    rendered = MarkdownIt("commonmark", {"html": True}).render(markdown)
    for tag, attrs in elements(rendered):
        assert tag not in {"script", "img", "svg", "details"}, tag
        assert not any(name.startswith("on") for name, _ in attrs)
        assert all(not (v or "").startswith("javascript") for _, v in attrs)
    cmp_json = client.get(reverse("traces:compare-json", args=[trace_id, other])).json()
    assert [n["text"] for n in cmp_json["a"]["notes"]] == [HOSTILE, HOSTILE]
    assert cmp_json["b"]["notes"] == []


@pytest.fixture
def world(settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_world()


def test_shared_mode_roles_authors_and_the_audit_log(world):
    trace = world.trace
    member = world.clients["member"]
    reply = add(member, trace.pk, call="1", text="member's note")
    assert reply.status_code == 302
    note = models.Note.objects.get()
    assert (note.author_label, note.author) == ("member", world.users["member"])
    event = models.AuditEvent.objects.get(action="note.add")
    assert (event.user, event.project_id) == (world.users["member"], world.alpha.pk)
    assert "call 1" in event.target
    # Members (and owners) see the forms; viewers and share-link visitors read only.
    for who in ("member", "owner"):
        html = page(world.clients[who], "traces:postmortem", trace.pk)
        assert "member's note" in html and "· member" in html
        assert 'action="' + reverse("traces:notes", args=[trace.pk]) + '"' in html
        assert "Edit or delete" in html
    for who in ("viewer", "share_link"):
        client = world.clients[who]
        for name, args in (
            ("traces:postmortem", [trace.pk]),
            ("traces:detail", [trace.pk]),
            ("traces:call", [trace.pk, 1]),
        ):
            html = page(client, name, *args)
            assert "member's note" in html, (who, name)
            assert reverse("traces:notes", args=[trace.pk]) not in html, (who, name)
            assert "Edit or delete" not in html and "Add note" not in html
        assert "member's note" in page(client, "traces:export-md", trace.pk)
        refused = 403 if who == "viewer" else 401  # a share-link visitor has no account
        assert add(client, trace.pk, text="sneaky").status_code == refused
        url = reverse("traces:note", args=[trace.pk, note.pk])
        assert client.post(url, {"action": "delete"}).status_code == refused
    assert models.Note.objects.count() == 1
    # An ingest token is a member's hand: it may add; its note carries the token's user.
    reply = world.clients["ingest_token"].post(
        reverse("traces:notes", args=[trace.pk]),
        {"text": "by script"},
        **world.headers("ingest_token"),
    )
    assert reply.status_code == 302
    assert models.Note.objects.get(text="by script").author_label == "member"
    # The outsider does not learn the trace exists.
    assert add(world.clients["outsider"], trace.pk, text="x").status_code == 404


def test_notes_survive_a_reanalysis(client):
    from django.core.management import call_command

    trace_id = upload(client)
    add(client, trace_id, call="2", text="kept")
    call_command("reanalyze", trace_id)
    assert "kept" in page(client, "traces:call", trace_id, 2)
