"""Originals move from database rows to Django's storage (see traces.originals).

Forwards, each chunk's and set file's zstd bytes are written to storage under the names
traces.originals gives them, and the rows keep only the name. The bytes leave the rows
only after every object is written (on PostgreSQL and SQLite the migration is one
transaction, so a failure leaves the rows as they were; objects already written are
rewritten by the next attempt). Backwards, the bytes are read back into the rows; the
objects are left in storage (deleting them cannot be undone if the rollback fails).
"""

from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import migrations, models


def _chunk_name(trace_id, seq):
    # The scheme of traces.originals.chunk_name, frozen here as migrations must be.
    text = str(trace_id)
    return f"originals/{text[:2]}/{text}/{seq:010d}.zst"


def _set_file_name(run_set_id, sha256):
    return f"sets/{run_set_id}/{sha256}.zst"


def to_storage(apps, schema_editor):
    storage = storages["default"]
    SourceChunk = apps.get_model("traces", "SourceChunk")
    RunSetFile = apps.get_model("traces", "RunSetFile")
    for pk in list(SourceChunk.objects.values_list("pk", flat=True)):
        trace_id, seq, data = SourceChunk.objects.values_list("trace_id", "seq", "data").get(
            pk=pk
        )
        name = storage.save(_chunk_name(trace_id, seq), ContentFile(bytes(data)))
        SourceChunk.objects.filter(pk=pk).update(key=name)
    for pk in list(RunSetFile.objects.values_list("pk", flat=True)):
        run_set_id, sha256, data = RunSetFile.objects.values_list(
            "run_set_id", "sha256", "data"
        ).get(pk=pk)
        name = storage.save(_set_file_name(run_set_id, sha256), ContentFile(bytes(data)))
        RunSetFile.objects.filter(pk=pk).update(key=name)


def to_rows(apps, schema_editor):
    storage = storages["default"]
    for model_name in ("SourceChunk", "RunSetFile"):
        model = apps.get_model("traces", model_name)
        for pk, key in list(model.objects.values_list("pk", "key")):
            with storage.open(key, "rb") as stored:
                model.objects.filter(pk=pk).update(data=stored.read())


class Migration(migrations.Migration):
    dependencies = [
        ("traces", "0011_merge_0007_proxy_capture_0010_nul_safe_new_columns"),
    ]

    operations = [
        migrations.AddField(
            model_name="sourcechunk",
            name="key",
            field=models.CharField(
                default="", help_text="The zstd object's name in storage.", max_length=300
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="runsetfile",
            name="key",
            field=models.CharField(
                default="", help_text="The zstd object's name in storage.", max_length=300
            ),
            preserve_default=False,
        ),
        # A default, so that undoing the removal below can add the column back to rows.
        migrations.AlterField(
            model_name="sourcechunk",
            name="data",
            field=models.BinaryField(blank=True, default=b""),
        ),
        migrations.AlterField(
            model_name="runsetfile",
            name="data",
            field=models.BinaryField(blank=True, default=b""),
        ),
        migrations.RunPython(to_storage, to_rows),
        migrations.RemoveField(model_name="sourcechunk", name="data"),
        migrations.RemoveField(model_name="runsetfile", name="data"),
    ]
