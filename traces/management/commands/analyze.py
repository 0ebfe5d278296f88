"""Run the core on trace files (no database) and print a summary or the JSON report."""

from __future__ import annotations

from traces import cli
from traces.management.core_command import CoreCommand


class Command(CoreCommand):
    help = "Analyse trace files with the core only and print a summary (or --json report)."
    add_core_arguments = staticmethod(cli.add_analyze_arguments)
    run_core = staticmethod(cli.analyze)
