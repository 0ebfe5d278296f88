"""Pages: the trace list with uploads, a trace, one call's inspector and its JSON."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson
from asgiref.sync import sync_to_async
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from traces.access.rules import Access, access, ingest_project, principal
from traces.conf import inspector_settings
from traces.core.labels import clean_labels
from traces.core.reading.limits import InputRejected
from traces.pages.accounting_presenter import findings_page
from traces.pages.diagram_presenter import (
    LAYOUTS,
    PAGE_LAYOUTS,
    chart_figures,
    chart_source,
    figures_inline,
)
from traces.pages.forms import UploadForm, format_options
from traces.pages.listing import list_context
from traces.pages.notes import notes_context
from traces.pages.page_report import PageReport
from traces.pages.page_summary_view import json_summary_page, page_window_source, summary_page
from traces.pages.presenters import (
    DiagramView,
    call_context,
    diagram_context,
    trace_context,
    window_move,
)
from traces.pages.whatif import chart_loop, live_what_if_figures, what_if_context
from traces.pages.window_figures import sign_runs, window_figures
from traces.selectors.figures import trace_figures
from traces.selectors.notes import trace_notes
from traces.selectors.traces import (
    call_get,
    call_request,
    trace_get,
)
from traces.services import mappings, set_ingest
from traces.services.labels import trace_set_labels
from traces.services.offload import off_thread
from traces.services.upload import trace_upload_pooled
from traces.storage.report_cache import load_report
from traces.web.uploads import UploadRefused, parsed_form

log = logging.getLogger(__name__)


@access(Access.READ)
@require_safe
def trace_list(request: HttpRequest) -> HttpResponse:
    return _list_page(request)


def _list_page(request: HttpRequest, upload_error: str = "", status: int = 200) -> HttpResponse:
    """The trace list with the upload form; a failed plain-form upload says why on it."""
    return render(
        request,
        "traces/list.html",
        {
            **list_context(request.GET, principal(request), base=reverse("traces:list")),
            "projects": principal(request).projects(Access.INGEST),
            "form": UploadForm(),
            "formats": format_options(),
            "upload_error": upload_error,
            "max_upload_mb": inspector_settings()["MAX_UPLOAD_BYTES"] // (1024 * 1024),
            "background_upload_bytes": int(inspector_settings()["BACKGROUND_UPLOAD_BYTES"]),
        },
        status=status,
    )


@access(Access.INGEST, uploads=True)
@csrf_exempt  # checked in the ingest pool below, where the body is parsed
@require_POST
async def upload(request: HttpRequest) -> HttpResponse:
    """Plain-form fallback for uploads without JavaScript.

    The multipart body is parsed (for the CSRF token too) and analysed in the ingest
    pool, never in the threads that serve pages; only choosing the project, the store
    and the page render touch the database.
    """
    form = await off_thread(_read_upload_form, request)
    if isinstance(form, HttpResponse):
        return form
    if isinstance(form, str):
        return await sync_to_async(_list_page)(request, form, status=400)
    project = await sync_to_async(ingest_project)(request, form.project_slug)
    if project is None:
        return await sync_to_async(_list_page)(
            request, "You cannot upload to that project.", status=403
        )
    who = await sync_to_async(principal)(request)
    if form.set_name:
        return await sync_to_async(_upload_set)(request, form, project, who)
    try:
        result = await trace_upload_pooled(
            files=form.files,
            name=form.name,
            who=who,
            project=project,
            format_name=form.format_name,
            labels=form.labels,
            mapping=form.mapping,
        )
    except InputRejected as exc:
        return await sync_to_async(_list_page)(request, f"{form.files[0][0]}: {exc}", status=400)
    return redirect(reverse("traces:detail", args=[result.trace.pk]))


@dataclass(frozen=True)
class _UploadForm:
    """What the upload form sent, read in the ingest pool."""

    files: list[tuple[str, bytes]]
    name: str
    format_name: str | None
    labels: list[str]
    set_name: str
    project_slug: str | None
    mapping: Any


def _read_upload_form(request: HttpRequest) -> _UploadForm | HttpResponse | str:
    """The form's content, a CSRF failure response, or the message for the form."""
    try:
        fields, files = parsed_form(request)
    except UploadRefused as exc:
        return str(exc)
    refused = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(request, None, (), {})
    if refused is not None:
        return refused
    form = UploadForm(fields, files)
    if not form.is_valid():
        return "Choose a trace file to upload."
    uploads = files.getlist("file")
    try:
        mapping = mappings.mapping_from_upload(form.cleaned_data.get("mapping"))
    except InputRejected as exc:
        return f"The mapping file: {exc}"
    return _UploadForm(
        files=[(upload.name or "", upload.read()) for upload in uploads],
        name=form.cleaned_data["name"] or uploads[0].name or "",
        format_name=form.cleaned_data["format"] or None,
        labels=clean_labels(form.cleaned_data["labels"]),
        set_name=form.cleaned_data["set"],
        project_slug=fields.get("project") or None,
        mapping=mapping,
    )


def _upload_set(request: HttpRequest, form: _UploadForm, project, who) -> HttpResponse:
    """Each run of the uploaded files into the run set the form names."""
    try:
        outcome = set_ingest.set_upload(
            name=form.set_name,
            files=form.files,
            who=who,
            project=project,
            format_name=form.format_name,
            labels=form.labels,
        )
    except InputRejected as exc:
        return _list_page(request, str(exc), status=400)
    if not outcome.added and not outcome.duplicates:
        problems = "; ".join(f"{name}: {why}" for name, why in outcome.rejected[:3])
        return _list_page(request, problems or "No run could be read.", status=400)
    return redirect(reverse("traces:set", args=[outcome.run_set.pk]))


@access(Access.MEMBER)
@require_POST
def edit_labels(request: HttpRequest, trace_id) -> HttpResponse:
    """The trace page's label form: the trace's labels become exactly those typed."""
    trace = trace_get(trace_id=trace_id, with_report=False)
    trace_set_labels(trace=trace, labels=clean_labels(request.POST.get("labels", "")))
    return redirect(reverse("traces:detail", args=[trace.pk]) + "#labels")


@access(Access.READ)
@require_safe
def trace_detail(request: HttpRequest, trace_id) -> HttpResponse:
    trace = trace_get(trace_id=trace_id, with_report=False)
    page = summary_page(trace, request.GET)
    if page is None:
        load_report(trace)
    diagram, view = _diagram(request, trace, page=page)
    tables = _window_tables(trace, view, page)
    loop = view.loop if view else None
    inline = figures_inline(page.report if page else trace.report, loop)
    panel = {"panel": page.what_if()} if page else {}
    what_if = what_if_context(trace, request.GET, loop, figures_inline=inline, **panel)
    who = principal(request)
    permissions = {
        "can_original": who.allows_trace(Access.ORIGINAL, trace.pk, trace.project_id),
        "can_change": who.allows_trace(Access.MEMBER, trace.pk, trace.project_id),
        # A share link opens this trace only: comparing it with another would be refused.
        "can_compare": who.allows(Access.READ, trace.project_id),
    }
    notes = notes_context(request, trace, trace_notes(trace_id=trace.pk), "trace")
    small = (page.report, page.digest) if page else ()
    figures = {"page_figures": trace_figures(trace, *small)} | window_figures(view, tables)
    context = tables | diagram | _runs_context(trace, who) | what_if | permissions | notes
    facts = tables["page_report"].accounting
    context |= findings_page(
        tables["findings"],
        request.GET,
        total=facts["findings_total"],
        by_rule=facts["findings_by_rule"],
    )
    return render(request, "traces/detail.html", context | figures)


def _diagram(
    request: HttpRequest, trace, *, always_figures: bool = False, page: PageReport | None = None
) -> tuple[dict[str, Any], DiagramView | None]:
    """The diagram's context for the query string's window, and that window's view (None:
    the trace has no loop to draw); the page and its live redraw read the same, but the
    page is sent the wide layout alone (its script fetches a phone's) and the redraw both.
    Given a summary `page`, the window is drawn from its parts and the strip from its marks."""
    summary: dict[str, Any] = {}
    if page is not None and page.head is not None and page.summary is not None:
        summary = {
            "head": page.head,
            "window_source": page_window_source(trace, page),
            "overviews": page.summary["overview"],
        }
    layouts = LAYOUTS if always_figures else PAGE_LAYOUTS  # a live redraw sends both
    context = diagram_context(
        trace, request.GET, always_figures=always_figures, layouts=layouts, **summary
    )
    return context, context["diagram"]


def _window_tables(
    trace, view: DiagramView | None, page: PageReport | None = None
) -> dict[str, Any]:
    """The page's tables for the diagram's window (all of them without a diagram), its
    tool runs signed for a live page to keep the rows it has."""
    window = view.window if view else None
    if window and window.get("first_call"):
        tables = trace_context(
            trace,
            loop=window["loop"],
            window=(window["first_call"], window["last_call"]),
            page=page,
        )
    else:
        tables = trace_context(trace, page=page)
    tables["tool_run_rows"] = sign_runs(tables["tool_runs"])
    return tables


def _runs_context(trace, who) -> dict:
    """Labels, run set and the other runs of that set (to compare with) for a trace page."""
    siblings = []
    if trace.run_set_id:
        siblings = list(
            who.traces(trace.run_set.runs.exclude(pk=trace.pk))
            .order_by("created_at")
            .values_list("pk", "name")[:500]
        )
    return {
        "trace_labels": [label.name for label in trace.labels.all()],
        "siblings": siblings,
    }


@access(Access.READ)
@require_safe
def call_detail(request: HttpRequest, trace_id, index: int) -> HttpResponse:
    trace = trace_get(trace_id=trace_id)
    call = call_get(trace=trace, index=index)
    context = call_context(trace, call)
    runs = {run.tool_call_id for run in context["asked_runs"] + context["answered_runs"]}
    on_call = [
        n for n in trace_notes(trace_id=trace.pk) if n.call == call.index or n.tool_run in runs
    ]
    return render(request, "traces/call.html", context | notes_context(request, trace, on_call))


@access(Access.READ)
@require_safe
def diagram_json(request: HttpRequest, trace_id) -> JsonResponse:
    """The diagram window, overview strip and figures, for a live page to redraw in place,
    with what the page shows of that window: its heading and its tool runs, as data; with
    `parts=window`, only what moving the window changes (the page's script moves it in
    place): the drawing, its neighbours' links and the strip's highlight."""
    if request.GET.get("parts") == "window":  # drawn from the report's parts when it has them
        return JsonResponse(
            window_move(trace_get(trace_id=trace_id, with_report=False), request.GET)
        )
    trace = trace_get(trace_id=trace_id, with_report=False)
    page = json_summary_page(trace, request.GET)  # a long trace: its summary, parts and views
    if page is None:
        load_report(trace)
    context, diagram = _diagram(request, trace, always_figures=True, page=page)
    if diagram is None:
        return JsonResponse({"svg": None, "figures": {}})
    tables = _window_tables(trace, diagram, page)
    live = {}
    if trace.state == "live":  # the what-if charts follow the stream too
        inline = figures_inline(trace.report or {}, diagram.loop)
        live["what_if_figures"] = live_what_if_figures(trace, diagram.loop, inline=inline)
    return JsonResponse(
        {
            "svg": str(diagram.svg),
            "overview": str(diagram.overview),
            "window": diagram.window,
            "loop": diagram.loop,
            **window_figures(diagram, tables),
            "figures": context["figures"],
            **live,
        }
    )


@access(Access.READ)
@require_safe
def figures_json(request: HttpRequest, trace_id) -> JsonResponse:
    """The charts of one loop (`?loop=`, else the outcome's), fetched by a trace page too
    long to embed them (see `diagram_presenter.LONG_LOOP_CALLS`)."""
    trace = trace_get(trace_id=trace_id, with_report=False)
    source = chart_source(trace)
    loop = chart_loop(source, request.GET.get("loop"))
    return JsonResponse({"figures": chart_figures(trace, source, loop)})


@access(Access.READ)
@require_safe
def call_request_json(request: HttpRequest, trace_id, index: int) -> HttpResponse:
    """The full request body of a call, rebuilt from its delta chain."""
    trace = trace_get(trace_id=trace_id)
    call = call_get(trace=trace, index=index)
    body = call_request(trace=trace, call=call)
    payload = {"system": body.system, "tools": body.tools, "messages": body.messages}
    response = HttpResponse(
        orjson.dumps(payload, option=orjson.OPT_INDENT_2), content_type="application/json"
    )
    response["Content-Disposition"] = f'inline; filename="call-{index}-request.json"'
    return response


@access(Access.READ)
@require_safe
def finding(request: HttpRequest, trace_id, number: int) -> HttpResponse:
    """Permalink of a finding: its place on its call's page (or the trace's findings)."""
    trace = trace_get(trace_id=trace_id)
    findings = trace.report.get("findings", [])
    if not 1 <= number <= len(findings):
        raise Http404("No such finding")
    call = findings[number - 1].get("call")
    if call is None:
        return redirect(reverse("traces:detail", args=[trace.pk]) + "#findings-title")
    return redirect(reverse("traces:call", args=[trace.pk, call]) + f"#finding-{number}")
