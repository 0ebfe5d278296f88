"""Migration 0013_storage moves originals kept in rows (chunks and set files) to storage,
byte for byte, and moving back puts the same bytes in the rows again."""

from __future__ import annotations

import uuid

import pytest

from tests.live.events import agent_lines, ndjson
from tests.storage.migrating import at, migrate
from traces.core.reading import archive

BEFORE = [("traces", "0011_merge_0007_proxy_capture_0010_nul_safe_new_columns")]
AFTER = [("traces", "0013_storage")]


@pytest.fixture
def old_schema(transactional_db):
    yield from at(BEFORE)


def test_originals_in_rows_move_to_storage_and_back(old_schema, originals_folder):
    apps = old_schema
    Project, Trace = apps.get_model("traces", "Project"), apps.get_model("traces", "Trace")
    SourceChunk = apps.get_model("traces", "SourceChunk")
    RunSet, RunSetFile = apps.get_model("traces", "RunSet"), apps.get_model("traces", "RunSetFile")
    project, _ = Project.objects.get_or_create(slug="default", defaults={"name": "Default"})
    trace = Trace.objects.create(id=uuid.uuid4(), project=project, name="old", format="x")
    parts = [ndjson(agent_lines(2)), b'{"nul": "\x00"}\n', b"tail without newline"]
    for seq, part in enumerate(parts):
        SourceChunk.objects.create(
            trace=trace, seq=seq * 10, raw_bytes=len(part), data=archive.compress(part)
        )
    run_set = RunSet.objects.create(id=uuid.uuid4(), project=project, name="s")
    RunSetFile.objects.create(
        run_set=run_set, filename="a.zip", sha256="ab" * 32, raw_bytes=3,
        data=archive.compress(b"zip"),
    )  # fmt: skip

    apps = migrate(AFTER)
    chunks = list(apps.get_model("traces", "SourceChunk").objects.order_by("seq"))
    stored = [archive.decompress((originals_folder / c.key).read_bytes()) for c in chunks]
    assert stored == parts
    assert chunks[1].key == f"originals/{str(trace.pk)[:2]}/{trace.pk}/0000000010.zst"
    set_file = apps.get_model("traces", "RunSetFile").objects.get()
    assert archive.decompress((originals_folder / set_file.key).read_bytes()) == b"zip"

    apps = migrate(BEFORE)
    rows = apps.get_model("traces", "SourceChunk").objects.order_by("seq")
    assert [archive.decompress(row.data) for row in rows] == parts
    back = apps.get_model("traces", "RunSetFile").objects.get()
    assert archive.decompress(back.data) == b"zip"
