"""Compare two runs (or, with --sets, two run sets) side by side in the terminal."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import orjson
from django.core.management.base import BaseCommand, CommandError

from traces import models
from traces.cli import CliError, read_trace
from traces.core.outputs.compare import Side, compare_runs, transcript_of
from traces.core.outputs.compare_text import render_runs, render_sets
from traces.core.outputs.report import build_report
from traces.selectors.compare import stored_side
from traces.selectors.sets import sets_comparison


def _side(reference: str) -> Side:
    """A trace file (read by the core, no database) or a stored trace's id or name."""
    path = Path(reference)
    if path.is_file():
        try:
            trace = read_trace(path)
        except CliError as exc:
            raise CommandError(str(exc)) from exc
        return Side(path.name, build_report(trace), transcript_of(trace))
    return stored_side(_stored_trace(reference))


def _stored_trace(reference: str) -> models.Trace:
    try:
        return models.Trace.objects.get(pk=uuid.UUID(reference))
    except (ValueError, models.Trace.DoesNotExist):
        pass
    found = list(models.Trace.objects.filter(name=reference)[:2])
    if len(found) == 1:
        return found[0]
    if found:
        raise CommandError(f"{reference}: several stored traces have that name; use an id")
    raise CommandError(f"{reference}: no such file, and no stored trace with that id or name")


def _stored_set(reference: str) -> models.RunSet:
    try:
        return models.RunSet.objects.get(pk=uuid.UUID(reference))
    except (ValueError, models.RunSet.DoesNotExist):
        pass
    try:
        return models.RunSet.objects.get(name=reference)
    except models.RunSet.DoesNotExist:
        raise CommandError(f"{reference}: no run set with that id or name") from None


class Command(BaseCommand):
    help = (
        "Compare two runs (trace files, or stored traces by id or name) call by call, "
        "or two run sets with --sets. Differences are B minus A."
    )

    def add_arguments(self, parser):
        parser.add_argument("a")
        parser.add_argument("b")
        parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
        parser.add_argument("--sets", action="store_true", help="A and B name run sets")

    def handle(self, *args, a, b, json, sets, **options):
        if sets:
            set_a, set_b = _stored_set(a), _stored_set(b)
            result = sets_comparison(set_a, set_b)
            text = render_sets(result, set_a.name, set_b.name)
        else:
            result = compare_runs(_side(a), _side(b))
            text = render_runs(result)
        if json:
            sys.stdout.buffer.write(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
            sys.stdout.flush()
        else:
            self.stdout.write(text, ending="")
