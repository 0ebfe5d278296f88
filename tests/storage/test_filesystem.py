"""The default store: originals are zstd objects in a folder (INSPECTOR_DATA_DIR), never
bytes in database rows; downloads, live tails, sets and deletion go through it."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from tests.live.events import agent_lines, ndjson
from tests.storage import scenario
from traces import models
from traces.services.deletion import trace_delete
from traces.services.upload import trace_upload
from traces.storage import originals

pytestmark = pytest.mark.django_db


def folder_listing(root):
    def listing(prefix: str) -> list[str]:
        base = root / prefix
        if not base.is_dir():
            return []
        return sorted(str(path.relative_to(root)) for path in base.rglob("*") if path.is_file())

    return listing


def test_every_kind_of_original_round_trips_through_the_folder(
    client, originals_folder, django_capture_on_commit_callbacks
):
    scenario.exercise(client, folder_listing(originals_folder), django_capture_on_commit_callbacks)


def test_the_folder_is_the_data_dir_setting_and_rows_hold_no_bytes(originals_folder):
    trace = trace_upload(files=[("", scenario.single_file())], name="t").trace
    chunk = trace.chunks.get()
    assert (originals_folder / chunk.key).is_file()
    assert originals.storage().path(chunk.key) == str(originals_folder / chunk.key)
    columns = {c.name for c in connection.introspection.get_table_description(
        connection.cursor(), models.SourceChunk._meta.db_table
    )}  # fmt: skip
    assert "data" not in columns and "key" in columns


def test_a_deletion_rolled_back_keeps_the_objects(
    originals_folder, django_capture_on_commit_callbacks
):
    trace = trace_upload(files=[("", scenario.single_file())], name="t").trace
    listing = folder_listing(originals_folder)
    kept = listing(originals.trace_prefix(trace.pk))
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        trace_delete(trace=trace, who="test")
        raise RuntimeError("the deletion fails after removing the rows")
    assert callbacks == []
    assert listing(originals.trace_prefix(trace.pk)) == kept != []
    assert models.Trace.objects.filter(pk=trace.pk).exists()


def test_a_failed_ingest_leaves_no_object_behind(originals_folder):
    """The objects are written before the rows; when the rows cannot be written (here: a
    project that was never saved), the objects are removed again."""
    listing = folder_listing(originals_folder)
    before = listing("originals")
    with pytest.raises(ValueError):
        trace_upload(
            files=[("", ndjson(agent_lines(2)))], name="t", project=models.Project(slug="ghost")
        )
    assert listing("originals") == before
    assert not models.Trace.objects.filter(name="t").exists()


def test_purge_and_cascades_remove_objects_once_committed(
    originals_folder, django_capture_on_commit_callbacks
):
    """Any path that deletes a trace (here the ORM directly) removes its objects."""
    listing = folder_listing(originals_folder)
    trace = trace_upload(files=[("", scenario.single_file())], name="t").trace
    assert listing(originals.trace_prefix(trace.pk))
    with django_capture_on_commit_callbacks(execute=True):
        models.Trace.objects.filter(pk=trace.pk).delete()
    assert listing(originals.trace_prefix(trace.pk)) == []
    assert not (originals_folder / originals.trace_prefix(trace.pk)).exists()


def test_a_missing_object_is_a_clear_404(client, originals_folder):
    scenario.missing_original(client, lambda key: (originals_folder / key).unlink())
