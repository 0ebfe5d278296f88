"""The trace page's summary of a long report (PageSummary), written with its parts.

No backfill: a summary is made from the decoded report, which for the traces it serves
(over 500 calls) means decoding tens of megabytes a trace; a trace stored before reads
its whole report as before until its next reanalysis writes the summary.
"""

import django.db.models.deletion
from django.db import migrations, models

import traces.fields


class Migration(migrations.Migration):
    dependencies = [
        ("traces", "0031_usage_indexes"),
    ]

    operations = [
        migrations.CreateModel(
            name="PageSummary",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("report_version", models.PositiveBigIntegerField()),
                ("data", traces.fields.PackedJSONField(default=dict)),
                (
                    "trace",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="page_summary",
                        to="traces.trace",
                    ),
                ),
            ],
        ),
    ]
