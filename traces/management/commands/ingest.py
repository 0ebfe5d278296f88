"""Store trace files and print their URLs."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from traces import services
from traces.cli import mapping_argument, read_mapping


class Command(BaseCommand):
    help = "Store one or more trace files and print the URL of each."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--format", dest="format_name", default=None)
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        mapping_argument(parser)
        parser.add_argument(
            "--together",
            action="store_true",
            help="store all files as one trace (a Claude Code session and its subagents)",
        )

    def handle(self, *args, files, format_name, base_url, together, mapping=None, **options):
        mapping = read_mapping(mapping)
        if together:
            try:
                result = services.trace_ingest_files(
                    files=[(str(path), path.read_bytes()) for path in files],
                    name="",
                    format_name=format_name,
                    mapping=mapping,
                )
            except (OSError, services.InputRejected) as exc:
                raise CommandError(str(getattr(exc, "strerror", None) or exc)) from exc
            trace = result.trace
            self.stdout.write(
                f"{base_url.rstrip('/')}/traces/{trace.pk}/  {trace.name}: {trace.format}, "
                f"{trace.calls_count} calls in {trace.loops_count} loops"
            )
            return
        failures = 0
        for path in files:
            try:
                data = path.read_bytes()
            except OSError as exc:
                self.stderr.write(f"{path}: cannot read ({exc.strerror})")
                failures += 1
                continue
            try:
                result = services.trace_ingest(
                    data=data,
                    name=path.name,
                    filename=path.name,
                    format_name=format_name,
                    mapping=mapping,
                )
            except services.InputRejected as exc:
                self.stderr.write(f"{path}: {exc}")
                failures += 1
                continue
            trace = result.trace
            errors = trace.line_errors_count
            note = f", {errors} unreadable line{'s' if errors != 1 else ''}" if errors else ""
            self.stdout.write(
                f"{base_url.rstrip('/')}/traces/{trace.pk}/  {path.name}: {trace.format}, "
                f"{trace.calls_count} call{'s' if trace.calls_count != 1 else ''}{note}"
            )
        if failures:
            raise CommandError(f"{failures} file(s) could not be ingested")
