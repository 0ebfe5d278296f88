"""The usage summary's findings and savings read in group order (issue 27): covering
indexes on (rule, …) and (lever, scenario, …) spare SQLite a sort of every row per
request, and one saving per (trace, lever) lets it count a lever's sessions as rows
(traces.selectors.usage)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("traces", "0030_search"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="usagefinding",
            index=models.Index(
                fields=["rule", "trace", "count", "cost_usd"], name="usage_finding_rule_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="usagesaving",
            index=models.Index(
                fields=["lever", "scenario", "trace", "usd_saved", "tokens_saved"],
                name="usage_saving_lever_idx",
            ),
        ),
        migrations.AddConstraint(
            model_name="usagesaving",
            constraint=models.UniqueConstraint(fields=("trace", "lever"), name="usage_saving_once"),
        ),
    ]
