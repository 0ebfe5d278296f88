"""The note forms: add a note (or mark the root cause) on a trace, a call or a tool run;
edit or delete one. Plain HTML forms with CSRF, each answered by a redirect back to the
page it came from, so they work without JavaScript.

Members change notes (`Access.MEMBER`: member or owner, or an `ingest` token); viewers and
share-link visitors only read them, and the pages show them no form.
"""

from __future__ import annotations

from functools import wraps
from types import MappingProxyType

from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from traces.access.rules import Access, access, body_bytes, principal
from traces.core.outputs.notes import MAX_NOTE_CHARS, Note, NoteRefused
from traces.selectors.notes import note_get
from traces.selectors.traces import trace_get
from traces.services.notes import note_add, note_delete, note_edit

RETURN_PAGES = MappingProxyType({"postmortem": "traces:postmortem", "trace": "traces:detail"})
"""The pages a form may send back to (by name only: never a URL from the form)."""


NOTE_FORM_BYTES = MAX_NOTE_CHARS * 4 * 3 + 4096
"""The most a note form's body can hold: the longest note, each character 4 bytes of
UTF-8 sent as 3-character escapes, and the other fields. Checked before the body is
parsed (the server's form limit is sized for trace uploads)."""


def _small_form(view):
    """Refuse a body no note form could send before it is parsed, then check CSRF (which
    parses it): the view is exempt from the middleware's check so it runs after the size."""

    @wraps(view)
    def checked(request: HttpRequest, trace_id, *args, **kwargs) -> HttpResponse:
        if body_bytes(request) > NOTE_FORM_BYTES:
            trace = trace_get(trace_id=trace_id, with_report=False)
            return _refused(request, trace, f"A note holds at most {MAX_NOTE_CHARS:,} characters.")
        refused = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(request, None, (), {})
        if refused is not None:
            return refused
        return view(request, trace_id, *args, **kwargs)

    return checked


def notes_context(request: HttpRequest, trace, notes: list[Note], page: str = "") -> dict:
    """What `_notes.html` and `_note_form.html` read: the notes, whether this visitor may
    change them (members; never a viewer or a share link), and the page to come back to."""
    who = principal(request)
    return {
        "notes": notes,
        "can_note": who.allows_trace(Access.MEMBER, trace.pk, trace.project_id),
        "next": page,
        "note_max_chars": MAX_NOTE_CHARS,
    }


def _back(request: HttpRequest, trace, call_index: int | None) -> HttpResponse:
    page = request.POST.get("next", "")
    if page in RETURN_PAGES:
        return redirect(reverse(RETURN_PAGES[page], args=[trace.pk]) + "#notes")
    if call_index is not None:
        return redirect(reverse("traces:call", args=[trace.pk, call_index]) + "#notes")
    return redirect(reverse("traces:detail", args=[trace.pk]) + "#notes")


def _refused(request: HttpRequest, trace, message: str) -> HttpResponse:
    context = {"trace": trace, "message": message}
    return render(request, "traces/note_refused.html", context, status=400)


def _call_index(trace, raw: str) -> int | str | None:
    """The call the form names (None: the whole trace), or the message why not."""
    if not raw:
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= trace.calls_count:
        return f"This trace has no call {raw[:20]}."
    return int(raw)


@access(Access.MEMBER)
@csrf_exempt  # checked by _small_form once the body's size is known to be a note's
@require_POST
@_small_form
def note_create(request: HttpRequest, trace_id) -> HttpResponse:
    """A note on the trace, a call (`call`) or a tool run (`tool_run`, its tool call id)."""
    trace = trace_get(trace_id=trace_id, with_report=False)
    form_call = _call_index(trace, request.POST.get("call", "").strip())
    if isinstance(form_call, str):
        return _refused(request, trace, form_call)
    call_index = form_call
    tool_run = request.POST.get("tool_run", "").strip()
    if tool_run:
        # A tool run's note belongs to the call that asked for it (else the one that
        # carried its result), whichever page the form was on.
        run = trace.tool_runs.filter(tool_call_id=tool_run).values("call", "result_call").first()
        if run is None:
            return _refused(request, trace, "This trace has no such tool run.")
        call_index = run["call"] or run["result_call"] or form_call
    try:
        note_add(
            who=principal(request),
            trace=trace,
            text=request.POST.get("text", ""),
            root_cause=request.POST.get("root_cause") == "on",
            call_index=call_index,
            tool_call_id=tool_run,
        )
    except NoteRefused as exc:
        return _refused(request, trace, str(exc))
    return _back(request, trace, form_call)


@access(Access.MEMBER)
@csrf_exempt  # checked by _small_form once the body's size is known to be a note's
@require_POST
@_small_form
def note_change(request: HttpRequest, trace_id, note_id: int) -> HttpResponse:
    """Edit a note (`text`, `root_cause`) or, with `action=delete`, delete it."""
    note = note_get(trace_id=trace_id, note_id=note_id)
    who = principal(request)
    if request.POST.get("action") == "delete":
        note_delete(who=who, note=note)
        return _back(request, note.trace, note.call_index)
    try:
        note_edit(
            who=who,
            note=note,
            text=request.POST.get("text", ""),
            root_cause=request.POST.get("root_cause") == "on",
        )
    except NoteRefused as exc:
        return _refused(request, note.trace, str(exc))
    return _back(request, note.trace, note.call_index)
