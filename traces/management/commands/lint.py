"""Lint trace files and exit 1 when findings reach a threshold, to gate an agent's CI."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import orjson
from django.core.management.base import BaseCommand, CommandError

from traces.cli import mapping_argument, price_table, read_mapping, read_trace
from traces.core.accounting import account
from traces.core.rules.base import SEVERITY_ORDER
from traces.core.rules.registry import rules, run_rules
from traces.core.sarif import to_sarif


def _split(values: list[str]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


class Command(BaseCommand):
    help = "Run the loop lint rules on trace files (exit 1 when findings reach --fail-on)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument(
            "--format",
            dest="output",
            choices=["text", "json", "sarif"],
            default="text",
            help="output format",
        )
        parser.add_argument("--trace-format", default=None, help="override format detection")
        mapping_argument(parser)
        parser.add_argument(
            "--fail-on", choices=["error", "warning", "info", "never"], default="error"
        )
        parser.add_argument("--select", action="append", default=[], help="only these rules")
        parser.add_argument("--ignore", action="append", default=[], help="skip these rules")
        parser.add_argument("--prices", type=Path, default=None, help="a price file (JSON)")

    def handle(
        self, *args, files, output, trace_format, fail_on, select, ignore, prices, **options
    ):
        known = {rule.id for rule in rules()}
        selected, ignored = _split(select), _split(ignore)
        unknown = sorted(set(selected + ignored) - known)
        if unknown:
            raise CommandError(f"unknown rule(s): {', '.join(unknown)}")
        table = price_table(prices)
        runs = []
        for path in files:
            trace = read_trace(path, trace_format, read_mapping(options.get("mapping")))
            findings = run_rules(
                trace, account(trace, table), select=selected or None, ignore=ignored
            )
            runs.append((str(path), trace, findings))
        self._print(output, runs)
        if fail_on != "never":
            limit = SEVERITY_ORDER[fail_on]
            if any(SEVERITY_ORDER[f.severity] <= limit for _, _, found in runs for f in found):
                sys.exit(1)

    def _print(self, output, runs) -> None:
        if output == "sarif":
            document = to_sarif(runs, version=_version(), rules_url="http://127.0.0.1:8000/rules")
            sys.stdout.buffer.write(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
        elif output == "json":
            payload = [
                {"file": uri, "findings": [f.as_dict() for f in findings]}
                for uri, _, findings in runs
            ]
            sys.stdout.buffer.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n")
        else:
            for uri, trace, findings in runs:
                lines = {call.index: call.line for call in trace.calls}
                for f in findings:
                    line = lines.get(f.call or 0, 0)
                    where = f"{uri}:{line}" if line else uri
                    self.stdout.write(f"{where}: {f.severity} [{f.rule}] {f.message}")
                self.stdout.write(f"{uri}: {len(findings)} finding(s)")
        sys.stdout.flush()


def _version() -> str:
    try:
        return version("loop-inspector")
    except PackageNotFoundError:
        return "0"
