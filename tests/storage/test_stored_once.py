"""Migration 0034 (issue 25): what was stored before it stays readable and searchable
after it, and migrating back keeps every entry's text (CI runs this on both databases)."""

from __future__ import annotations

import uuid
import zlib

import orjson
import pytest
from django.db import connection

from tests.core.builders import log, pair, user
from tests.storage.migrating import at, migrate
from traces import models
from traces.core.reading import blobs
from traces.selectors.content import search_content
from traces.services.deletion import trace_delete
from traces.services.upload import trace_upload

BEFORE = [("traces", "0033_report_views")]
AFTER = [("traces", "0034_stored")]
VALUE = {"role": "user", "content": "an old zlib blob " * 40}


@pytest.fixture
def old_schema(transactional_db):
    yield from at(BEFORE)


def found(q: str) -> list[int]:
    return [hit.call_index for hit in search_content(q=q, traces=models.Trace.objects.all())]


def test_rows_stored_before_0034_are_read_and_found_after_it_and_back(old_schema):
    Project, Trace = (
        old_schema.get_model("traces", "Project"),
        old_schema.get_model("traces", "Trace"),
    )
    Blob, Entry = (
        old_schema.get_model("traces", "Blob"),
        old_schema.get_model("traces", "SearchEntry"),
    )
    project, _ = Project.objects.get_or_create(slug="default", defaults={"name": "Default"})
    old = Trace.objects.create(id=uuid.uuid4(), project=project, name="old", format="x")
    digest, raw = blobs.digested(VALUE)
    Blob.objects.create(digest=digest, size=len(raw), data=b"z" + zlib.compress(raw, 6))
    Entry.objects.create(trace_id=old.pk, call_index=1, body="an old platypus entry")

    migrate(AFTER)
    assert blobs.decode(models.Blob.objects.get(digest=digest).data) == VALUE
    assert found("platypus") == [1]
    data = log(pair([user("a new echidna")], None))
    new = trace_upload(files=[("new.jsonl", data)], name="new").trace
    assert found("echidna") == [1]
    entry = new.search_entries.get()
    assert entry.text.startswith("a new echidna")
    if connection.vendor == "sqlite":
        assert entry.body == "" and entry.packed is not None
        with connection.cursor() as cursor:  # the blobs in their key's b-tree alone
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'traces_blob'")
            assert cursor.fetchone()[0].endswith("WITHOUT ROWID")

    apps = migrate(BEFORE)  # back: every entry's text in `body`, found by 0022's index
    Entry = apps.get_model("traces", "SearchEntry")
    assert Entry.objects.get(trace_id=new.pk).body.startswith("a new echidna")
    assert (
        orjson.loads(
            zlib.decompress(
                bytes(apps.get_model("traces", "Blob").objects.get(digest=digest).data)[1:]
            )
        )
        == VALUE
    )

    migrate(AFTER)
    assert found("platypus") == [1] and found("echidna") == [1]
    trace_delete(trace=models.Trace.objects.get(pk=new.pk), who="test")
    assert found("echidna") == [] and found("platypus") == [1]
