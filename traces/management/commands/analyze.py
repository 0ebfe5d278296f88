"""Run the core on trace files (no database) and print a summary or the JSON report."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from traces import cli


class Command(BaseCommand):
    help = "Analyse trace files with the core only and print a summary (or --json report)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        cli.add_analyze_arguments(parser)

    def handle(self, *args, **options):
        try:
            cli.analyze(**options)
        except cli.CliError as exc:
            raise CommandError(str(exc)) from exc
