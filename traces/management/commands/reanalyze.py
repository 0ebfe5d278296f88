"""Re-run the core on stored traces' original bytes (after an upgrade: new rules, prices)."""

from django.core.management.base import BaseCommand

from traces import models
from traces.core.reading.limits import InputRejected
from traces.services import ingest, jobs


class Command(BaseCommand):
    help = "Rebuild the rows and report of stored traces from their original bytes."

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", help="trace ids (default: every closed trace)")
        parser.add_argument(
            "--missing-messages",
            action="store_true",
            help="only traces with calls stored before their normalised messages were kept",
        )
        parser.add_argument(
            "--missing-search",
            action="store_true",
            help="only traces with calls but no content-search entries (stored before 0022)",
        )
        parser.add_argument(
            "--missing-usage",
            action="store_true",
            help="only traces with calls but no usage rows (stored before 0023)",
        )
        parser.add_argument(
            "--queue",
            action="store_true",
            help="queue one job per trace for the workers instead of running them here",
        )

    def handle(
        self,
        *args,
        ids,
        missing_messages=False,
        missing_search=False,
        missing_usage=False,
        queue=False,
        **options,
    ):
        traces = models.Trace.objects.exclude(state=models.Trace.State.LIVE)
        if ids:
            traces = traces.filter(pk__in=ids)
        if missing_messages:
            stale = models.Call.objects.filter(appended_message_digests__isnull=True)
            traces = traces.filter(pk__in=stale.values("trace_id"))
        if missing_search:
            indexed = models.SearchEntry.objects.values("trace_id")
            traces = traces.filter(calls_count__gt=0).exclude(pk__in=indexed)
        if missing_usage:
            counted = models.UsageSlot.objects.values("trace_id")
            traces = traces.filter(calls_count__gt=0).exclude(pk__in=counted)
        if queue:
            for trace in traces.iterator():
                job = jobs.queue_reanalysis(trace)
                self.stdout.write(f"{trace.pk} {trace.name}: job {job.pk}")
            return
        count = 0
        for trace in traces.iterator():
            try:
                ingest.trace_reanalyze(trace=trace)
            except InputRejected as exc:
                self.stderr.write(f"{trace.pk} {trace.name}: {exc}")
                continue
            count += 1
            self.stdout.write(f"{trace.pk} {trace.name}: {trace.calls_count} calls")
        self.stdout.write(f"re-analysed {count} trace(s)")
