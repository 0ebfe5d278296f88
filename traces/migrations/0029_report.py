"""The report moves from a JSON column (jsonb on PostgreSQL) to a compressed one
(traces.fields.PackedJSONField): a 20,000-call report took 34 MB, packed some 3 MB.

Every stored report is copied across, one row at a time (a report can be tens of
megabytes decoded), so existing traces open as before; reversed, they are copied back.
Their diagram windows' parts (ReportPart) are cut by the next reanalysis: until then a
window move reads the whole report, as before.
"""

import django.db.models.deletion
from django.db import migrations, models

import traces.fields


def _copy(apps, source: str, target: str) -> None:
    Trace = apps.get_model("traces", "Trace")
    for pk in Trace.objects.values_list("pk", flat=True).iterator(chunk_size=200):
        value = Trace.objects.filter(pk=pk).values_list(source, flat=True).first()
        Trace.objects.filter(pk=pk).update(**{target: value if value is not None else {}})


def pack(apps, schema_editor) -> None:
    _copy(apps, "report", "report_packed")


def unpack(apps, schema_editor) -> None:
    _copy(apps, "report_packed", "report")


class Migration(migrations.Migration):
    dependencies = [
        ("traces", "0028_otlpfast"),
    ]

    operations = [
        migrations.AddField(
            model_name="trace",
            name="report_packed",
            field=traces.fields.PackedJSONField(default=dict),
        ),
        migrations.RunPython(pack, unpack, elidable=False),
        migrations.RemoveField(model_name="trace", name="report"),
        migrations.RenameField(model_name="trace", old_name="report_packed", new_name="report"),
        migrations.CreateModel(
            name="ReportPart",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveIntegerField()),
                ("report_version", models.PositiveBigIntegerField()),
                ("data", traces.fields.PackedJSONField(default=dict)),
                (
                    "trace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="report_parts",
                        to="traces.trace",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("trace", "number"), name="report_part_unique")
                ],
            },
        ),
    ]
