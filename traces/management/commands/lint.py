"""Lint trace files (or a stored run set) and exit 1 when findings reach a threshold."""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Callable

from django.core.management.base import BaseCommand, CommandError

from traces import cli
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.model import Trace
from traces.core.reading.limits import InputRejected


class Command(BaseCommand):
    help = "Run the loop lint rules on trace files (exit 1 when findings reach --fail-on)."
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        cli.add_lint_arguments(parser, files_required=False)
        parser.add_argument(
            "--set",
            dest="set_name",
            default="",
            help="lint the stored runs of this run set (name or id), from their original bytes",
        )

    def handle(self, *args, set_name="", **options):
        try:
            sources = _set_sources(set_name) if set_name else []
            status = cli.lint(
                **options, sources=sources, title=f"Run set {set_name}" if set_name else ""
            )
        except cli.CliError as exc:
            raise CommandError(str(exc)) from exc
        if status:
            sys.exit(status)


def _set_sources(reference: str) -> list[tuple[str, Callable[[], Trace]]]:
    """(uri, reader) of each stored run of a set: the core reads each original again."""
    from traces import models  # the database only for --set
    from traces.selectors.traces import trace_source_bytes, trace_source_files

    run_set = models.RunSet.objects.filter(name=reference).first()
    if run_set is None:
        with contextlib.suppress(ValueError):
            run_set = models.RunSet.objects.filter(pk=uuid.UUID(reference)).first()
    if run_set is None:
        raise CommandError(f"{reference}: no run set with that name or id")

    def reader(run: models.Trace) -> Callable[[], Trace]:
        def read() -> Trace:
            files = trace_source_files(trace=run)
            try:
                if files:
                    return analyze_files(files, format_name=run.format)
                data = trace_source_bytes(trace=run)
                return analyze_bytes(data, filename=run.source_filename, format_name=run.format)
            except InputRejected as exc:
                raise CommandError(f"{run.name}: {exc}") from exc

        return read

    runs = run_set.runs.defer("report", "stats").order_by("created_at", "pk")
    return [(run.source_filename or run.name, reader(run)) for run in runs]
