"""Lint trace files and exit 1 when findings reach a threshold, to gate an agent's CI."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from traces import cli


class Command(BaseCommand):
    help = "Run the loop lint rules on trace files (exit 1 when findings reach --fail-on)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        cli.add_lint_arguments(parser)

    def handle(self, *args, **options):
        try:
            status = cli.lint(**options)
        except cli.CliError as exc:
            raise CommandError(str(exc)) from exc
        if status:
            sys.exit(status)
