"""Store trace files and print their URLs."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from traces import models, services


class Command(BaseCommand):
    help = "Store one or more trace files and print the URL of each."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--format", dest="format_name", default=None)
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument(
            "--project", default=None, metavar="SLUG", help="the project (default: default)"
        )
        parser.add_argument(
            "--together",
            action="store_true",
            help="store all files as one trace (a Claude Code session and its subagents)",
        )

    def handle(self, *args, files, format_name, base_url, together, project, **options):
        if project is not None:
            found = models.Project.objects.filter(slug=project).first()
            if found is None:
                raise CommandError(f"No project called {project}.")
            project = found
        if together:
            try:
                result = services.trace_ingest_files(
                    files=[(str(path), path.read_bytes()) for path in files],
                    name="",
                    format_name=format_name,
                    project=project,
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
                    project=project,
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
