"""Close live traces that have had no line for INSPECTOR["LIVE_IDLE_SECONDS"] (cron-able)."""

from django.core.management.base import BaseCommand

from traces import live


class Command(BaseCommand):
    help = "Close every live trace idle for longer than INSPECTOR['LIVE_IDLE_SECONDS']."

    def handle(self, *args, **options):
        closed = live.sweep_idle()
        for trace_id in closed:
            self.stdout.write(f"closed {trace_id}")
        self.stdout.write(f"{len(closed)} idle live trace(s) closed")
