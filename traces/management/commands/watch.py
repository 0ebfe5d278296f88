"""Find every agent's sessions on this machine, import what is new and follow what grows.

The work is `traces.live.watch.watch_pass`; this command repeats it every `--interval`
seconds (or once, with `--once`, for cron and tests) and prints what each pass did.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from traces.core.discovery import STORES, default_home
from traces.live.watch import follow_until, watch_pass


class Command(BaseCommand):
    help = (
        "Import every agent session found under your home (each agent's own folder, or the "
        "folder its environment variable names), then keep following the sessions that grow."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--home", type=Path, default=None, help="look under this home (default: $HOME)"
        )
        parser.add_argument(
            "--root",
            dest="roots",
            type=Path,
            action="append",
            default=[],
            metavar="DIR",
            help="also look below DIR as if it were a home (repeatable)",
        )
        parser.add_argument(
            "--store",
            dest="only",
            action="append",
            default=[],
            choices=[store.key for store in STORES],
            help="only this store (repeatable; default: all)",
        )
        parser.add_argument("--once", action="store_true", help="one pass, then exit")
        parser.add_argument("--interval", type=float, default=1.0, metavar="SECONDS")

    def handle(self, *args, home, roots, only, once, interval, **_):
        if interval <= 0:
            raise CommandError("--interval must be more than 0 seconds")
        home = home or default_home(os.environ)
        for root in roots:
            if not root.is_dir():
                raise CommandError(f"--root {root}: not a folder")
        try:
            while True:
                report = watch_pass(home=home, env=os.environ, roots=roots, only=only)
                if once or report.imported or report.appended_lines or report.problems:
                    self.stdout.write(report.summary())
                    for problem in report.problems:
                        self.stderr.write(f"  {problem}")
                if once:
                    return
                # Until the next pass: the live sessions followed (a stat each, 5 times a
                # second), so an append reaches an open page well within a second.
                follow_until(time.monotonic() + interval, only=only)
        except KeyboardInterrupt:
            pass
