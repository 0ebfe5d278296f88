"""Content search (issue 22): the calls' text is indexed by the database in use (SQLite
FTS5, PostgreSQL tsvector: CI runs this file on both), found from the list's search box,
and shown as an escaped snippet with the matched words marked, linking to the call."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.urls import reverse

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces import live, models
from traces.access.rules import Principal
from traces.core.outputs.content_search import PIECE_CHARS
from traces.selectors.content import fts5_ready, search_content
from traces.services.deletion import trace_delete
from traces.services.ingest import trace_reanalyze
from traces.services.upload import trace_upload
from traces.storage.row_writer import insert_rows
from traces.storage.search_index import FTS_TABLE

COLUMNS = ["trace_id", "call_index", "body"]

pytestmark = pytest.mark.django_db

HOSTILE_ARGS = {"pattern": "<script>alert('x')</script> ' OR 1=1; -- DROP TABLE traces_trace"}
NUL_RESULT = "before\x00zebrafish after the NUL <b>bold</b> & more"
BIG = "quokka " + "lorem ipsum " * (PIECE_CHARS // 12) + " wombat " + "x" * 1_000_000


def hostile_log() -> bytes:
    """Three calls: a tool call with SQL- and HTML-ish arguments, a result with a NUL in
    it, and a result of over 1 MB whose second word sits past the indexed first 64 KiB."""
    first = [user("find the invoice for ACME")]
    call_1 = response([tool_use("t1", name="grep", **HOSTILE_ARGS)], "tool_use")
    second = [*first, call_1_msg(call_1), tool_msg("t1", NUL_RESULT)]
    call_2 = response([tool_use("t2", name="read_file", path="big.txt")], "tool_use")
    third = [*second, call_1_msg(call_2), tool_msg("t2", BIG)]
    call_3 = response([{"type": "text", "text": "Done: the invoice is <i>paid</i>."}], "end_turn")
    return log(pair(first, call_1), pair(second, call_2), pair(third, call_3))


def call_1_msg(resp: dict) -> dict:
    return {"role": "assistant", "content": resp["content"]}


def tool_msg(tool_id: str, content: str) -> dict:
    return {"role": "user", "content": [tool_result(tool_id, content)]}


@pytest.fixture
def hostile():
    return trace_upload(files=[("hostile.jsonl", hostile_log())], name="hostile run").trace


def hits(q: str) -> dict:
    return {
        (hit.trace_id, hit.call_index): hit
        for hit in search_content(q=q, traces=models.Trace.objects.all())
    }


def marked(hit) -> list[str]:
    return [text for text, is_marked in hit.snippet.parts() if is_marked]


def test_each_call_is_indexed_and_found_by_its_words(hostile):
    assert sorted(hostile.search_entries.values_list("call_index", flat=True)) == [1, 2, 3]
    found = hits("zebrafish")
    assert list(found) == [(hostile.pk, 2)]  # the tool result arrived with call 2
    hit = found[(hostile.pk, 2)]
    assert marked(hit) == ["zebrafish"]
    assert "\x00" not in hit.snippet.text
    assert hit.calls_matching == 1
    # Tool arguments are found in the call that made them (and in the next, whose
    # request appended that response).
    args = hits("DROP traces_trace")
    assert list(args) == [(hostile.pk, 1)]
    assert args[(hostile.pk, 1)].calls_matching == 2
    # Every word is required, in any case; a word that is nowhere finds nothing.
    assert hits("ZEBRAFISH Bold")
    assert not hits("zebrafish platypus")
    # The call that appended the invoice message and every later one match: first shown.
    invoice = hits("invoice")[(hostile.pk, 1)]
    assert invoice.calls_matching == 2  # call 1 (the user's message) and 3 (the answer)


def test_a_one_megabyte_result_is_indexed_by_its_first_64_kib(hostile):
    assert list(hits("quokka")) == [(hostile.pk, 3)]
    assert not hits("wombat")  # past the first 64 KiB of its result
    text = hostile.search_entries.get(call_index=3).text
    assert "quokka" in text and len(text) < 2 * PIECE_CHARS


HOSTILE_QUERIES = [
    "' OR 1=1 --",
    '"unclosed',
    "zebra* NEAR(a b) AND OR NOT ^body:",
    "\x00zebrafish\x00",
    "%_\\",
    "!!! &&& ||| ::",
    "body:zebrafish",
    "a" * 5000,
]


def test_hostile_queries_never_fail(client, hostile):
    for q in HOSTILE_QUERIES:
        page = client.get(reverse("traces:list"), {"q": q})
        assert page.status_code == 200, q
        search_content(q=q, traces=models.Trace.objects.all())  # raises nothing


def test_nul_in_the_query_is_a_separator(hostile):
    assert list(hits("\x00zebrafish\x00")) == [(hostile.pk, 2)]


def test_the_list_shows_escaped_highlighted_snippets_linking_to_the_call(client, hostile):
    other = trace_upload(files=[("", log(pair([user("hello")], None)))], name="other").trace
    page = client.get(reverse("traces:list"), {"q": "script alert"})
    assert page.status_code == 200
    assert [trace.name for trace in page.context["traces"]] == ["hostile run"]
    html = page.content.decode()
    row = re.search(r'<tr class="content-hit">(.*?)</tr>', html, re.S)
    assert row is not None
    cell = row.group(1)
    link = reverse("traces:call", args=[hostile.pk, 1])
    assert f'href="{link}"' in cell
    assert "&lt;<mark>script</mark>&gt;<mark>alert</mark>(&#x27;x&#x27;)" in cell
    assert "<script>alert" not in html
    # A name match lists the trace too, without a snippet.
    page = client.get(reverse("traces:list"), {"q": "other"})
    assert [trace.name for trace in page.context["traces"]] == ["other"]
    assert 'class="content-hit"' not in page.content.decode()
    assert other.search_entries.count() == 1


def test_only_the_callers_projects_are_searched(client, settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    alpha = models.Project.objects.create(slug="alpha", name="Alpha")
    beta = models.Project.objects.create(slug="beta", name="Beta")
    reader = get_user_model().objects.create_user("reader", password="x" * 20)
    models.Membership.objects.create(project=alpha, user=reader, role="viewer")
    secret = log(pair([user("the launch code is kumquat")], None))
    theirs = trace_upload(files=[("", secret)], name="beta run", project=beta).trace
    ours = trace_upload(files=[("", secret)], name="alpha run", project=alpha).trace
    who = Principal(user=reader)
    assert [hit.trace_id for hit in search_content(q="kumquat", traces=who.traces())] == [ours.pk]
    client.force_login(reader)
    page = client.get(reverse("traces:list"), {"q": "kumquat"})
    assert [trace.pk for trace in page.context["traces"]] == [ours.pk]
    assert str(theirs.pk) not in page.content.decode()


def test_reanalysis_replaces_and_deletion_removes_the_entries(hostile):
    trace_reanalyze(trace=hostile)
    assert sorted(hostile.search_entries.values_list("call_index", flat=True)) == [1, 2, 3]
    assert list(hits("zebrafish")) == [(hostile.pk, 2)]
    trace_delete(trace=hostile, who="test")
    assert not models.SearchEntry.objects.exists()
    assert not hits("zebrafish")
    if connection.vendor == "sqlite":
        assert fts5_ready()
        with connection.cursor() as cursor:  # the FTS5 index agrees with its content table
            cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('integrity-check')")
            cursor.execute(f"SELECT count(*) FROM {FTS_TABLE}")
            assert cursor.fetchone() == (0,)


def test_live_batches_are_indexed_as_they_arrive():
    lines = hostile_log().splitlines()
    trace = live.create_live_trace(name="live hostile", format_name="anthropic-messages")
    live.append_lines(trace_id=trace.pk, offset=0, lines=lines[:1])
    assert list(hits("traces_trace")) == [(trace.pk, 1)]
    assert not hits("zebrafish")
    live.append_lines(trace_id=trace.pk, offset=1, lines=lines[1:])
    assert list(hits("zebrafish")) == [(trace.pk, 2)]
    assert sorted(trace.search_entries.values_list("call_index", flat=True)) == [1, 2, 3]


def test_without_fts5_search_scans_the_text_and_w003_says_so(hostile):
    """An SQLite built without FTS5 gets no index from migration 0022 (made here by
    dropping it inside the test's transaction, which rolls it back)."""
    from traces import checks

    if connection.vendor != "sqlite":
        pytest.skip("FTS5 is SQLite's")
    assert checks.check_content_search(databases=["default"]) == []
    with connection.cursor() as cursor:
        for suffix in ("ai", "ad", "au"):
            cursor.execute(f"DROP TRIGGER traces_searchentry_{suffix}")
        cursor.execute(f"DROP TABLE {FTS_TABLE}")
    assert not fts5_ready()
    [problem] = checks.check_content_search(databases=["default"])
    assert problem.id == "traces.W003" and "FTS5" in problem.msg
    assert checks.check_content_search() == []  # a plain `check` does not ask
    assert list(hits("zebrafish")) == [(hostile.pk, 2)]
    assert not hits("zebrafish platypus")


def test_reanalyze_missing_search_indexes_traces_stored_before_the_index(hostile):
    from io import StringIO

    from django.core.management import call_command

    indexed = trace_upload(files=[("", log(pair([user("kept as is")], None)))], name="ok").trace
    hostile.search_entries.all().delete()  # as if stored before migration 0022
    out = StringIO()
    call_command("reanalyze", "--missing-search", stdout=out)
    assert f"{hostile.pk} hostile run" in out.getvalue()
    assert str(indexed.pk) not in out.getvalue()
    assert list(hits("zebrafish")) == [(hostile.pk, 2)]


def test_entries_written_many_a_statement_are_each_stored_and_found(hostile):
    """index_calls writes many rows an INSERT (FTS5 writes a segment per statement): seven
    rows three a statement (3, 3, 1) are all stored, in order, each found by its word, and
    on SQLite the FTS5 index agrees with its content table."""
    rows = [(hostile.pk, 10 + n, f"numbat{n}x and a shared wallaby") for n in range(7)]
    assert insert_rows(models.SearchEntry, COLUMNS, rows, rows_per_statement=3) == 7
    stored = hostile.search_entries.filter(call_index__gte=10).order_by("id")
    assert list(stored.values_list("call_index", "body")) == [row[1:] for row in rows]
    assert [entry.text for entry in stored] == [row[2] for row in rows]
    for n in range(7):
        assert list(hits(f"numbat{n}x")) == [(hostile.pk, 10 + n)]
    (shared,) = hits("wallaby").values()  # one hit a trace, with its count of calls
    assert shared.calls_matching == 7
    if connection.vendor == "sqlite" and fts5_ready():
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('integrity-check')")


def test_on_sqlite_the_text_is_stored_once_packed_and_found_by_its_index(hostile):
    """With FTS5 an entry's text is packed in its row, `body` empty, and the contentless
    index holds no copy; entries stored as text before (migration 0034) are found beside
    them, and deleting either kind keeps the index in step."""
    if not fts5_ready():
        pytest.skip("PostgreSQL's index reads the text itself: stored as text")
    entry = hostile.search_entries.get(call_index=2)
    assert entry.body == "" and entry.packed is not None and "zebrafish" in entry.text
    insert_rows(models.SearchEntry, COLUMNS, [(hostile.pk, 9, "an old bilby entry")])
    assert list(hits("bilby")) == [(hostile.pk, 9)]
    assert list(hits("zebrafish")) == [(hostile.pk, 2)]
    hostile.search_entries.filter(call_index__in=[2, 9]).delete()
    assert not hits("bilby") and not hits("zebrafish")
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('integrity-check')")


def test_every_letter_fts5_splits_is_a_separator_of_its_queries(hostile):
    """The index keeps no positions, so a word FTS5 reads as two would be a phrase it
    refuses: SQLite itself says which of Python's word characters it splits on, and those
    are FTS5_SEPARATORS; a word holding one is searched as its pieces."""
    import sqlite3

    from traces.selectors.content import FTS5_SEPARATORS

    word = re.compile(r"[^\W_]")
    chars = [chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000]
    chars = [c for c in chars if word.match(c)]
    probe = sqlite3.connect(":memory:")
    probe.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 0')"
    )
    probe.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    probe.executemany(
        "INSERT INTO t(rowid, body) VALUES (?, ?)", enumerate("a" + c + "b" for c in chars)
    )
    split = {
        chars[doc] for (doc,) in probe.execute("SELECT doc FROM v GROUP BY doc HAVING count(*) > 1")
    }
    assert split == {c for c in chars if FTS5_SEPARATORS.fullmatch(c)}
    assert not hits("zebra\u19b0fish")  # pieces "zebra" and "fish", each required: no error
