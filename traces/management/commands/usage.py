"""`usage daily|weekly|monthly`: spend and tokens per period across the stored traces, by
model, agent and project, where the money went and what fixing it would have saved.

Read from the usage rows (traces.selectors.usage), the same as the page `/usage/`.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from traces.core.outputs.usage_periods import PERIODS, UsageError, parse_date, zone
from traces.core.outputs.usage_text import usage_text
from traces.selectors.usage import UsageQuery, usage_summary


class Command(BaseCommand):
    help = "Spend and tokens per day, week or month, from the stored traces' usage rows."
    # A read of a few summary rows: the system checks would take longer than the answer.
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("period", choices=PERIODS)
        parser.add_argument("--since", help="first day, YYYYMMDD or YYYY-MM-DD (included)")
        parser.add_argument("--until", help="last day, YYYYMMDD or YYYY-MM-DD (included)")
        parser.add_argument("--agent", default="", help="only this agent's sessions")
        parser.add_argument("--project", default="", help="only this project (working dir)")
        parser.add_argument("--model", default="", help="only calls to this model")
        parser.add_argument(
            "--timezone",
            default="local",
            help="IANA zone the days are counted in (default: this machine's local time)",
        )
        parser.add_argument("--breakdown", action="store_true", help="each period by model")
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args, period, since, until, agent, project, model, timezone, **options):
        try:
            query = UsageQuery(
                period=period,
                tz=zone(timezone),
                since=parse_date(since, "--since") if since else None,
                until=parse_date(until, "--until") if until else None,
                agent=agent,
                project=project,
                model=model,
                breakdown=options["breakdown"],
            )
            summary = usage_summary(query=query)
        except UsageError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
        else:
            self.stdout.write(usage_text(summary), ending="")
