"""Re-run the core on stored traces' original bytes (after an upgrade: new rules, prices)."""

from django.core.management.base import BaseCommand

from traces import jobs, models, services


class Command(BaseCommand):
    help = "Rebuild the rows and report of stored traces from their original bytes."

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", help="trace ids (default: every closed trace)")
        parser.add_argument(
            "--queue",
            action="store_true",
            help="queue one job per trace for the workers instead of running them here",
        )

    def handle(self, *args, ids, queue=False, **options):
        traces = models.Trace.objects.exclude(state=models.Trace.State.LIVE)
        if ids:
            traces = traces.filter(pk__in=ids)
        if queue:
            for trace in traces.iterator():
                job = jobs.queue_reanalysis(trace)
                self.stdout.write(f"{trace.pk} {trace.name}: job {job.pk}")
            return
        count = 0
        for trace in traces.iterator():
            try:
                services.trace_reanalyze(trace=trace)
            except services.InputRejected as exc:
                self.stderr.write(f"{trace.pk} {trace.name}: {exc}")
                continue
            count += 1
            self.stdout.write(f"{trace.pk} {trace.name}: {trace.calls_count} calls")
        self.stdout.write(f"re-analysed {count} trace(s)")
