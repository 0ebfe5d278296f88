"""Store the bundled sample trace once, so a fresh `make serve` has something to show."""

from django.core.management.base import BaseCommand

from traces import models
from traces.core.reading.sample import sample_bytes
from traces.services.upload import trace_upload

SAMPLE_NAME = "Sample: calendar assistant (seed worked example)"


class Command(BaseCommand):
    help = "Load the bundled sample trace (skipped when it is already stored)."

    def handle(self, *args, **options):
        existing = models.Trace.objects.filter(name=SAMPLE_NAME).first()
        if existing is not None:
            self.stdout.write(f"Sample already loaded: /traces/{existing.pk}/")
            return
        result = trace_upload(files=[("sample-calendar.jsonl", sample_bytes())], name=SAMPLE_NAME)
        self.stdout.write(f"Loaded the sample trace: /traces/{result.trace.pk}/")
