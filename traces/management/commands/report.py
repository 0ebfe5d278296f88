"""Write a trace's post-mortem as a self-contained HTML file (and/or Markdown), no server."""

from __future__ import annotations

from traces import cli
from traces.management.core_command import CoreCommand


class Command(CoreCommand):
    help = "Write the post-mortem of a trace file as HTML (--html OUT) and/or Markdown (--md OUT)."
    add_core_arguments = staticmethod(cli.add_report_arguments)
    run_core = staticmethod(cli.report)
