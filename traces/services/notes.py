"""Writes of people's notes on a trace: add, edit, delete, each in the audit log.

One module for the three so the rules live once: the text is checked by the core
(`clean_note_text`: the size limit, an empty remark), the author is kept only in shared
mode (local mode has no accounts; the note is still timed), and every change is one
audit line in the same transaction as the write.
"""

from __future__ import annotations

from django.db import transaction

from traces import models
from traces.access.rules import Principal, local_mode
from traces.core.outputs.notes import clean_note_text
from traces.services.team import audit


def _author(who: Principal) -> tuple[object, str]:
    """The user and the name shown on the note; none in local mode."""
    if local_mode():
        return None, ""
    user = who.audit_user
    return user, (user.get_username() if user is not None else who.label)[:200]


def _target(trace: models.Trace, note: models.Note) -> str:
    where = f"call {note.call_index}" if note.call_index is not None else "trace"
    if note.tool_call_id:
        where = f"tool run {note.tool_call_id} ({where})"
    return f"{trace.name} ({trace.pk}): {where}"


def note_add(
    *,
    who: Principal,
    trace: models.Trace,
    text: str,
    root_cause: bool = False,
    call_index: int | None = None,
    tool_call_id: str = "",
) -> models.Note:
    """A new note (or root-cause mark); `NoteRefused` when its text cannot be kept."""
    cleaned = clean_note_text(text, root_cause=root_cause)
    user, label = _author(who)
    with transaction.atomic():
        note = models.Note.objects.create(
            trace=trace,
            call_index=call_index,
            tool_call_id=tool_call_id[:300],
            root_cause=root_cause,
            text=cleaned,
            author=user,
            author_label=label,
        )
        audit(
            who, "note.add", project=trace.project_id, target=_target(trace, note),
            note=note.pk, root_cause=root_cause, chars=len(cleaned),
        )  # fmt: skip
    return note


def note_edit(*, who: Principal, note: models.Note, text: str, root_cause: bool) -> models.Note:
    """Replace a note's text and mark; the author stays who wrote it first."""
    cleaned = clean_note_text(text, root_cause=root_cause)
    with transaction.atomic():
        note.text, note.root_cause = cleaned, root_cause
        note.save(update_fields=["text", "root_cause", "updated_at"])
        audit(
            who, "note.edit", project=note.trace.project_id, target=_target(note.trace, note),
            note=note.pk, root_cause=root_cause, chars=len(cleaned),
        )  # fmt: skip
    return note


def note_delete(*, who: Principal, note: models.Note) -> None:
    with transaction.atomic():
        target = _target(note.trace, note)
        audit(who, "note.delete", project=note.trace.project_id, target=target, note=note.pk)
        note.delete()
