"""Reads of people's notes: a trace's notes as the core's `Note` records, which every page
and export is given as data (the core never reads storage)."""

from __future__ import annotations

from collections.abc import Iterable

from django.shortcuts import get_object_or_404

from traces import models
from traces.core.outputs.notes import Note
from traces.core.outputs.postmortem import PostMortem, build_postmortem
from traces.storage.report_views import postmortem_input


def _iso(moment) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else ""


def _edited(row: models.Note) -> bool:
    """Saved again after it was written (the two stamps of a first save differ by less)."""
    return (row.updated_at - row.created_at).total_seconds() > 1


def note_record(row: models.Note) -> Note:
    return Note(
        id=row.pk,
        text=row.text,
        call=row.call_index,
        tool_run=row.tool_call_id or None,
        root_cause=row.root_cause,
        author=row.author_label,
        created_at=_iso(row.created_at),
        updated_at=_iso(row.updated_at) if _edited(row) else "",
    )


def trace_notes(*, trace_id) -> list[Note]:
    """Every note on the trace, oldest first."""
    return [note_record(row) for row in models.Note.objects.filter(trace_id=trace_id)]


def notes_of_traces(trace_ids: Iterable) -> dict:
    """Notes of several traces (compare), by trace id."""
    found: dict = {trace_id: [] for trace_id in trace_ids}
    for row in models.Note.objects.filter(trace_id__in=list(found)):
        found.setdefault(row.trace_id, []).append(note_record(row))
    return found


def note_get(*, trace_id, note_id: int) -> models.Note:
    """The note of that trace, or 404 (a note of another trace is not found here)."""
    rows = models.Note.objects.select_related("trace")
    return get_object_or_404(rows, pk=note_id, trace_id=trace_id)


def postmortem_of(trace: models.Trace) -> PostMortem:
    """The post-mortem of a stored trace with its notes: what the Markdown export (and so
    the MCP server's `get_postmortem`) renders."""
    return build_postmortem(postmortem_input(trace), trace.name, trace_notes(trace_id=trace.pk))
