"""Write a trace's post-mortem as a self-contained HTML file (and/or Markdown), no server."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from traces import cli


class Command(BaseCommand):
    help = "Write the post-mortem of a trace file as HTML (--html OUT) and/or Markdown (--md OUT)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        cli.add_report_arguments(parser)

    def handle(self, *args, **options):
        try:
            cli.report(**options)
        except cli.CliError as exc:
            raise CommandError(str(exc)) from exc
