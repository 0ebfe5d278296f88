"""Lint trace files (or a stored run set) and exit 1 when findings reach a threshold, to
gate an agent's CI. Over several runs it also prints how many runs each rule fired in."""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import orjson
from django.core.management.base import BaseCommand, CommandError

from traces.cli import mapping_argument, price_table, read_mapping, read_trace
from traces.core.accounting import account
from traces.core.ingest import analyze_bytes, analyze_files
from traces.core.limits import InputRejected
from traces.core.lint_summary import LintedRun, aggregate, render_aggregate
from traces.core.model import Trace
from traces.core.rules.base import SEVERITY_ORDER
from traces.core.rules.registry import rules, run_rules
from traces.core.sarif import to_sarif
from traces.core.summary import outcome_of


def _split(values: list[str]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


class Command(BaseCommand):
    help = "Run the loop lint rules on trace files (exit 1 when findings reach --fail-on)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", type=Path)
        parser.add_argument(
            "--set",
            dest="set_name",
            default="",
            help="lint the stored runs of this run set (name or id), from their original bytes",
        )
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
        self,
        *args,
        files,
        output,
        trace_format,
        fail_on,
        select,
        ignore,
        prices,
        set_name,
        **options,
    ):
        if not files and not set_name:
            raise CommandError("name trace files, or a run set with --set NAME")
        known = {rule.id for rule in rules()}
        selected, ignored = _split(select), _split(ignore)
        unknown = sorted(set(selected + ignored) - known)
        if unknown:
            raise CommandError(f"unknown rule(s): {', '.join(unknown)}")
        table = price_table(prices)
        runs = []
        mapping = read_mapping(options.get("mapping"))
        sources = [
            (str(path), lambda path=path: read_trace(path, trace_format, mapping)) for path in files
        ]
        if set_name:
            sources += _set_sources(set_name)
        for uri, read in sources:
            trace = read()
            findings = run_rules(
                trace, account(trace, table), select=selected or None, ignore=ignored
            )
            runs.append((uri, trace, findings))
        self._print(output, runs, title=f"Run set {set_name}" if set_name else "")
        if fail_on != "never":
            limit = SEVERITY_ORDER[fail_on]
            if any(SEVERITY_ORDER[f.severity] <= limit for _, _, found in runs for f in found):
                sys.exit(1)

    def _print(self, output, runs, title: str = "") -> None:
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
            if len(runs) > 1 or title:
                linted = [
                    LintedRun(uri, outcome_of(trace).kind, found) for uri, trace, found in runs
                ]
                self.stdout.write("")
                self.stdout.write(render_aggregate(aggregate(linted), title), ending="")
        sys.stdout.flush()


def _set_sources(reference: str) -> list[tuple[str, Callable[[], Trace]]]:
    """(uri, reader) of each stored run of a set: the core reads each original again."""
    from traces import models, selectors  # the database only for --set

    run_set = models.RunSet.objects.filter(name=reference).first()
    if run_set is None:
        with contextlib.suppress(ValueError):
            run_set = models.RunSet.objects.filter(pk=uuid.UUID(reference)).first()
    if run_set is None:
        raise CommandError(f"{reference}: no run set with that name or id")

    def reader(run: models.Trace) -> Callable[[], Trace]:
        def read() -> Trace:
            files = selectors.trace_source_files(trace=run)
            try:
                if files:
                    return analyze_files(files, format_name=run.format)
                data = selectors.trace_source_bytes(trace=run)
                return analyze_bytes(data, filename=run.source_filename, format_name=run.format)
            except InputRejected as exc:
                raise CommandError(f"{run.name}: {exc}") from exc

        return read

    runs = run_set.runs.defer("report", "stats").order_by("created_at", "pk")
    return [(run.source_filename or run.name, reader(run)) for run in runs]


def _version() -> str:
    try:
        return version("loop-inspector")
    except PackageNotFoundError:
        return "0"
