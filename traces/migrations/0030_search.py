"""The trace of each content-search entry readable from an index (issue 22): SQLite reads
`trace_id` of the entries FTS5 matched from (id, trace_id) instead of from each row, past
its ~2 KB body (traces.selectors.content `matching_trace_ids`)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("traces", "0029_report"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="searchentry",
            index=models.Index(fields=["id", "trace"], name="search_entry_trace_key"),
        ),
    ]
