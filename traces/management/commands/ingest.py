"""Store trace files (or the runs of a run set) and print their URLs."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from traces import models
from traces.cli import CliError, mapping_argument, read_mapping
from traces.core.labels import clean_labels
from traces.core.reading.folders import expand_folders
from traces.core.reading.limits import InputRejected
from traces.services import set_ingest
from traces.services.upload import trace_upload


class Command(BaseCommand):
    help = "Store one or more trace files and print the URL of each."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", type=Path)
        parser.add_argument("--format", dest="format_name", default=None)
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        mapping_argument(parser)
        parser.add_argument(
            "--set",
            dest="set_name",
            default="",
            help="store each run of the files (each file, each member of a ZIP, each sample "
            "of an Inspect log) as one trace of this run set; files already in it are skipped",
        )
        parser.add_argument("--labels", default="", help="comma-separated labels for the traces")
        parser.add_argument(
            "--project", default=None, metavar="SLUG", help="the project (default: default)"
        )
        parser.add_argument(
            "--together",
            action="store_true",
            help="store all files as one trace (a Claude Code session and its subagents); "
            "without it, each folder given is one trace of the files below it (a session folder)",
        )

    def handle(
        self,
        *args,
        files,
        format_name,
        base_url,
        together,
        set_name,
        labels,
        project,
        mapping=None,
        **options,
    ):
        labels = clean_labels(labels)
        try:
            mapping = read_mapping(mapping)
        except CliError as exc:
            raise CommandError(str(exc)) from exc
        if project is not None:
            found = models.Project.objects.filter(slug=project).first()
            if found is None:
                raise CommandError(f"No project called {project}.")
            project = found
        if set_name:
            self._ingest_set(files, set_name, format_name, base_url, labels, project)
            return
        if together:
            try:
                result = trace_upload(
                    files=expand_folders(files),
                    name="",
                    format_name=format_name,
                    labels=labels,
                    project=project,
                    mapping=mapping,
                )
            except (OSError, ValueError, InputRejected) as exc:
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
                loaded = (
                    expand_folders([path]) if path.is_dir() else [(path.name, path.read_bytes())]
                )
            except (OSError, ValueError) as exc:
                self.stderr.write(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})")
                failures += 1
                continue
            try:
                result = trace_upload(
                    files=loaded,
                    name=path.name,
                    format_name=format_name,
                    labels=labels,
                    project=project,
                    mapping=mapping,
                )
            except InputRejected as exc:
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

    def _ingest_set(self, files, set_name, format_name, base_url, labels, project) -> None:
        base = base_url.rstrip("/")
        try:
            loaded = [(path.name, path.read_bytes()) for path in files]
            result = set_ingest.set_upload(
                name=set_name, files=loaded, format_name=format_name, labels=labels, project=project
            )
        except OSError as exc:
            raise CommandError(f"{exc.filename}: cannot read ({exc.strerror})") from exc
        except InputRejected as exc:
            raise CommandError(str(exc)) from exc
        for trace in result.added:
            self.stdout.write(
                f"{base}/traces/{trace.pk}/  {trace.name}: {trace.format}, "
                f"{trace.calls_count} call{'s' if trace.calls_count != 1 else ''}"
            )
        for name in result.duplicates:
            self.stdout.write(f"already in the set (same content): {name}")
        for name, why in result.rejected:
            self.stderr.write(f"{name}: {why}")
        run_set = result.run_set
        self.stdout.write(
            f"{base}/sets/{run_set.pk}/  run set {run_set.name}: {len(result.added)} added, "
            f"{len(result.duplicates)} already there, {len(result.rejected)} unreadable, "
            f"{run_set.runs.count()} runs in all"
        )
        if not result.added and not result.duplicates:
            raise CommandError("no run could be stored")
