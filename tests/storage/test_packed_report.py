"""The stored report is packed (traces.fields.PackedJSONField): one compressed column that
reads back as the report it was given, NUL and all, in fewer bytes than the original file;
migration 0029_report packs the reports stored before it, and unpacks them going back."""

from __future__ import annotations

import uuid

import orjson
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.core.long_session import make_session
from traces import fields, models
from traces.selectors.traces import trace_get
from traces.services.upload import trace_upload
from traces.storage import report_cache

BEFORE = [("traces", "0028_otlpfast")]
AFTER = [("traces", "0029_report")]
OLD_REPORT = {
    "schema": "loop-inspector/report/v1",
    "calls": [{"index": 1, "model": "claude\x00x", "error": fields.ESC + "0"}],
    "findings": [],
}


def stored_bytes(trace_id) -> bytes:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT report FROM traces_trace WHERE id = %s",
            [trace_id.hex if connection.vendor == "sqlite" else trace_id],
        )
        (raw,) = cursor.fetchone()
    return bytes(raw)


def test_pack_round_trips_what_json_holds():
    value = {"k\x00": ["a\x00", {"b": fields.ESC, "n": None, "f": 1.5}], "lone": "\ud800"}
    packed = fields.pack_json(value)
    assert packed.startswith(fields.PACKED_MAGIC)
    assert fields.unpack_json(packed) == value
    with pytest.raises(ValueError):
        fields.unpack_json(b'{"plain": "json"}')


@pytest.mark.django_db
def test_a_stored_report_is_packed_smaller_than_the_original_and_reads_back_whole():
    original = make_session(300)
    trace = trace_upload(files=[("s.jsonl", original)], name="packed").trace
    raw = stored_bytes(trace.pk)
    assert raw.startswith(fields.PACKED_MAGIC)
    report_cache.clear()
    report = trace_get(trace_id=trace.pk).report
    assert len(report["calls"]) == 300
    json_size = fields.unpacked_size(raw)
    assert json_size == len(orjson.dumps(report))
    assert len(raw) * 4 < json_size  # the report's JSON is repetitive: zstd keeps < 1/4
    assert len(raw) < len(original)  # issue 25: stored report at most x1 the original


@pytest.fixture
def old_schema(transactional_db):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    yield executor.loader.project_state(BEFORE).apps
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_reports_stored_before_0029_are_packed_and_unpacked_going_back(old_schema):
    Project, Trace = (
        old_schema.get_model("traces", "Project"),
        old_schema.get_model("traces", "Trace"),
    )
    project, _ = Project.objects.get_or_create(slug="default", defaults={"name": "Default"})
    old = Trace.objects.create(id=uuid.uuid4(), project=project, name="old", report=OLD_REPORT)
    empty = Trace.objects.create(id=uuid.uuid4(), project=project, name="empty")

    apps = migrate(AFTER)
    assert stored_bytes(old.pk).startswith(fields.PACKED_MAGIC)
    assert apps.get_model("traces", "Trace").objects.get(pk=old.pk).report == OLD_REPORT
    assert apps.get_model("traces", "Trace").objects.get(pk=empty.pk).report == {}

    apps = migrate(BEFORE)
    assert apps.get_model("traces", "Trace").objects.get(pk=old.pk).report == OLD_REPORT


def test_the_model_reads_a_migrated_report(old_schema):
    Project, Trace = (
        old_schema.get_model("traces", "Project"),
        old_schema.get_model("traces", "Trace"),
    )
    project, _ = Project.objects.get_or_create(slug="default", defaults={"name": "Default"})
    old = Trace.objects.create(id=uuid.uuid4(), project=project, name="old", report=OLD_REPORT)
    migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    report_cache.clear()
    assert trace_get(trace_id=old.pk).report == OLD_REPORT
    assert isinstance(models.Trace.objects.get(pk=old.pk).report, dict)
