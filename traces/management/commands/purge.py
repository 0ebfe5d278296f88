"""Delete traces past their project's retention period, and blobs nothing uses (cron-able)."""

from django.core.management.base import BaseCommand

from traces.services import deletion


class Command(BaseCommand):
    help = "Delete traces older than their project's retention period (Project.retention_days)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="list what would go, delete nothing"
        )

    def handle(self, *args, dry_run, **options):
        expired = deletion.expired_traces()
        for trace in expired:
            self.stdout.write(
                f"{'would delete' if dry_run else 'deleted'} {trace.pk}  {trace.name}"
            )
        if dry_run:
            self.stdout.write(f"{len(expired)} trace(s) past retention")
            return
        blobs = deletion.traces_delete(traces=expired, who="manage.py purge", reason="retention")
        self.stdout.write(f"{len(expired)} trace(s) purged, {blobs} unused blob(s) removed")
