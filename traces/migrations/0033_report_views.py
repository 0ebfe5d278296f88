"""A long trace's stored answers (ReportView): its loops' charts and default what-if.

No backfill: each is computed from the decoded report on its first request and kept;
ingest and reanalysis write those of the default loop.
"""

import django.db.models.deletion
import traces.fields
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("traces", "0032_summary"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReportView",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100)),
                ("report_version", models.PositiveBigIntegerField()),
                ("data", traces.fields.PackedJSONField(default=dict)),
                (
                    "trace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="report_views",
                        to="traces.trace",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("trace", "name"), name="report_view_unique")
                ],
            },
        ),
    ]
