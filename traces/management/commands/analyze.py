"""Run the core on trace files (no database) and print a summary or the JSON report."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
from django.core.management.base import BaseCommand, CommandError

from traces.cli import mapping_argument, price_table, read_mapping, read_trace, read_traces
from traces.core.report import build_report
from traces.core.text_summary import render_summary


class Command(BaseCommand):
    help = "Analyse trace files with the core only and print a summary (or --json report)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--format", dest="format_name", default=None)
        mapping_argument(parser)
        parser.add_argument("--json", action="store_true", help="print the JSON report")
        parser.add_argument("--prices", type=Path, default=None, help="a price file (JSON)")
        parser.add_argument(
            "--together",
            action="store_true",
            help="read all files as one trace (a Claude Code session and its subagents)",
        )

    def handle(self, *args, files, format_name, json, prices, together, mapping, **options):
        table = price_table(prices)
        mapping = read_mapping(mapping)
        if together:
            report = build_report(read_traces(files, format_name, mapping), prices=table)
            if json:
                sys.stdout.buffer.write(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
                sys.stdout.flush()
            else:
                self.stdout.write(render_summary(" + ".join(p.name for p in files), report))
            return
        reports = []
        failures = 0
        for path in files:
            try:
                trace = read_trace(path, format_name, mapping)
            except CommandError as exc:
                self.stderr.write(str(exc))
                failures += 1
                continue
            report = build_report(trace, prices=table)
            if json:
                reports.append(report)
            else:
                self.stdout.write(render_summary(path.name, report))
        if json and reports:
            payload = reports[0] if len(files) == 1 else reports
            sys.stdout.buffer.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n")
            sys.stdout.flush()
        if failures:
            raise CommandError(f"{failures} file(s) could not be analysed")
