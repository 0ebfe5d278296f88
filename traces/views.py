"""Pages: the trace list with uploads, a trace, one call's inspector, downloads."""

from __future__ import annotations

import io
import zipfile

import orjson
from asgiref.sync import sync_to_async
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from traces import selectors, services
from traces.conf import app_css, inspector_settings
from traces.core.export_html import render_export
from traces.core.export_md import render_markdown
from traces.core.formats.registry import adapters, get_adapter
from traces.core.postmortem import build_postmortem
from traces.forms import UploadForm
from traces.offload import off_thread
from traces.presenters import call_context, diagram_context, trace_context
from traces.uploads import UploadRefused, parsed_form


@require_safe
def trace_list(request: HttpRequest) -> HttpResponse:
    return _list_page(request)


def _list_page(request: HttpRequest, upload_error: str = "", status: int = 200) -> HttpResponse:
    """The trace list with the upload form; a failed plain-form upload says why on it."""
    return render(
        request,
        "traces/list.html",
        {
            "traces": selectors.trace_list()[:500],
            "form": UploadForm(),
            "formats": adapters(),
            "upload_error": upload_error,
            "max_upload_mb": inspector_settings()["MAX_UPLOAD_BYTES"] // (1024 * 1024),
        },
        status=status,
    )


@csrf_exempt  # checked in the ingest pool below, where the body is parsed
@require_POST
async def upload(request: HttpRequest) -> HttpResponse:
    """Plain-form fallback for uploads without JavaScript.

    The multipart body is parsed (for the CSRF token too) and analysed in the ingest
    pool, never in the threads that serve pages; only the store and the page render
    touch the database.
    """
    outcome = await off_thread(_read_upload_form, request)
    if isinstance(outcome, HttpResponse):
        return outcome
    if isinstance(outcome, str):
        return await sync_to_async(_list_page)(request, outcome, status=400)
    result = await sync_to_async(services.ingest_store)(outcome)
    return redirect(reverse("traces:detail", args=[result.trace.pk]))


def _read_upload_form(request: HttpRequest) -> services.PreparedIngest | HttpResponse | str:
    """The prepared ingest, a CSRF failure response, or the message for the form."""
    try:
        fields, files = parsed_form(request)
    except UploadRefused as exc:
        return str(exc)
    refused = CsrfViewMiddleware(lambda r: HttpResponse()).process_view(request, None, (), {})
    if refused is not None:
        return refused
    form = UploadForm(fields, files)
    valid = form.is_valid()
    if not valid:
        return "Choose a trace file to upload."
    file = form.cleaned_data["file"]
    try:
        return services.ingest_prepare(
            files=[(file.name, file.read())],
            name=form.cleaned_data["name"] or file.name,
            format_name=form.cleaned_data["format"] or None,
        )
    except services.InputRejected as exc:
        return f"{file.name}: {exc}"


@require_safe
def trace_detail(request: HttpRequest, trace_id) -> HttpResponse:
    trace = selectors.trace_get(trace_id=trace_id)
    diagram = diagram_context(trace, request.GET)
    window = (diagram.get("diagram") or {}).get("window")
    if window and window.get("first_call"):
        tables = trace_context(
            trace, loop=window["loop"], window=(window["first_call"], window["last_call"])
        )
    else:
        tables = trace_context(trace)
    return render(request, "traces/detail.html", tables | diagram)


@require_safe
def call_detail(request: HttpRequest, trace_id, index: int) -> HttpResponse:
    trace = selectors.trace_get(trace_id=trace_id)
    call = selectors.call_get(trace=trace, index=index)
    try:
        normalize = get_adapter(trace.format).normalize
    except KeyError:
        normalize = None
    return render(request, "traces/call.html", call_context(trace, call, normalize))


@require_safe
def diagram_json(request: HttpRequest, trace_id) -> JsonResponse:
    """The diagram window, overview strip and figures, for a live page to redraw in place."""
    trace = selectors.trace_get(trace_id=trace_id)
    context = diagram_context(trace, request.GET)
    diagram = context.get("diagram")
    if diagram is None:
        return JsonResponse({"svg": None, "figures": {}})
    return JsonResponse(
        {
            "svg": str(diagram["svg"]),
            "overview": str(diagram["overview"]),
            "window": diagram["window"],
            "figures": context["figures"],
        }
    )


@require_safe
def call_request_json(request: HttpRequest, trace_id, index: int) -> HttpResponse:
    """The full request body of a call, rebuilt from its delta chain."""
    trace = selectors.trace_get(trace_id=trace_id)
    call = selectors.call_get(trace=trace, index=index)
    body = selectors.call_request(trace=trace, call=call)
    payload = {"system": body.system, "tools": body.tools, "messages": body.messages}
    response = HttpResponse(
        orjson.dumps(payload, option=orjson.OPT_INDENT_2), content_type="application/json"
    )
    response["Content-Disposition"] = f'inline; filename="call-{index}-request.json"'
    return response


@require_safe
def download(request: HttpRequest, trace_id) -> HttpResponse:
    trace = selectors.trace_get(trace_id=trace_id)
    files = selectors.trace_source_files(trace=trace)
    if files:
        return _download_files(trace, files, request.GET.get("file"))
    response = HttpResponse(
        selectors.trace_source_bytes(trace=trace), content_type="application/octet-stream"
    )
    filename = _slug(trace.source_filename) if trace.source_filename else f"trace-{trace.pk}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_safe
def finding(request: HttpRequest, trace_id, number: int) -> HttpResponse:
    """Permalink of a finding: its place on its call's page (or the trace's findings)."""
    trace = selectors.trace_get(trace_id=trace_id)
    findings = trace.report.get("findings", [])
    if not 1 <= number <= len(findings):
        raise Http404("No such finding")
    call = findings[number - 1].get("call")
    if call is None:
        return redirect(reverse("traces:detail", args=[trace.pk]) + "#findings-title")
    return redirect(reverse("traces:call", args=[trace.pk, call]) + f"#finding-{number}")


@require_safe
def postmortem(request: HttpRequest, trace_id) -> HttpResponse:
    trace = selectors.trace_get(trace_id=trace_id)
    pm = build_postmortem(trace.report, trace.name)
    return render(request, "traces/postmortem.html", {"trace": trace, "pm": pm})


@require_safe
def export_markdown(request: HttpRequest, trace_id) -> HttpResponse:
    trace = selectors.trace_get(trace_id=trace_id)
    url = request.build_absolute_uri(reverse("traces:detail", args=[trace.pk]))
    text = render_markdown(build_postmortem(trace.report, trace.name), url)
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{_slug(trace.name)}.md"'
    return response


@require_safe
def export_html(request: HttpRequest, trace_id) -> HttpResponse:
    """One self-contained HTML file (styles, SVG, data inline; no script) to keep or share."""
    trace = selectors.trace_get(trace_id=trace_id)
    url = request.build_absolute_uri(reverse("traces:detail", args=[trace.pk]))
    document = render_export(trace.report, name=trace.name, css=app_css(), source_url=url)
    response = HttpResponse(document, content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_slug(trace.name)}.html"'
    return response


def _download_files(trace, files: list[tuple[str, bytes]], wanted: str | None) -> HttpResponse:
    """One of several uploaded files (?file=N), or all of them in a ZIP, each as received."""
    if wanted is not None:
        position = int(wanted) if wanted.isdigit() else -1
        if not 0 <= position < len(files):
            raise Http404("No such file in this trace")
        filename, data = files[position]
        response = HttpResponse(data, content_type="application/octet-stream")
        response["Content-Disposition"] = f'attachment; filename="{_slug(filename)}"'
        return response
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        used: set[str] = set()
        for position, (filename, data) in enumerate(files):
            member = _slug(filename)
            if member in used:
                member = f"{position}-{member}"
            used.add(member)
            bundle.writestr(member, data)
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{_slug(trace.name)}.zip"'
    return response


def _slug(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name)
    return cleaned.strip("-.")[:80] or "trace"
