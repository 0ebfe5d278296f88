"""The shape of the management commands that run a core command (`analyze`, `report`).

Each is the console script's command of the same name (traces.cli) behind `manage.py`:
no system or migration checks (the core reads no database), and the command's own error
shown as Django's CommandError. One class holds that, so each command names only its
arguments and its function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from traces import cli


class CoreCommand(BaseCommand):
    requires_system_checks: list = []
    requires_migrations_checks = False
    add_core_arguments: Callable[[Any], None]
    """Adds the command's arguments to its parser (a `traces.cli.add_*_arguments`)."""
    run_core: Callable[..., Any]
    """Runs it with the parsed options (a `traces.cli` command function)."""

    def add_arguments(self, parser):
        self.add_core_arguments(parser)

    def handle(self, *args, **options):
        try:
            self.run_core(**options)
        except cli.CliError as exc:
            raise CommandError(str(exc)) from exc
