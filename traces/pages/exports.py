"""Pages: a trace's post-mortem, and what a trace is taken away as: its original as
received, its post-mortem in Markdown, its report as one self-contained HTML file."""

from __future__ import annotations

import io
import logging
import zipfile

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from traces.access.rules import Access, access
from traces.core.outputs.export_html import render_export
from traces.core.outputs.export_md import render_markdown
from traces.core.outputs.postmortem import build_postmortem
from traces.pages.accounting_presenter import FINDINGS_PER_PAGE
from traces.pages.notes import notes_context
from traces.pages.postmortem_findings import rule_groups
from traces.selectors.notes import postmortem_of, trace_notes
from traces.selectors.traces import trace_get, trace_source_bytes, trace_source_files
from traces.storage.originals import OriginalMissing
from traces.storage.report_views import postmortem_input
from traces.web.assets import app_css

log = logging.getLogger(__name__)


@access(Access.ORIGINAL)
@require_safe
def download(request: HttpRequest, trace_id) -> HttpResponse:
    trace = trace_get(trace_id=trace_id, with_report=False)
    try:
        files = trace_source_files(trace=trace)
        data = b"" if files else trace_source_bytes(trace=trace)
    except OriginalMissing as exc:
        log.error("trace %s: object %s is missing from storage", trace.pk, exc)
        return HttpResponse(
            "The original of this trace is missing from storage.", status=404,
            content_type="text/plain; charset=utf-8",
        )  # fmt: skip
    if files:
        return _download_files(trace, files, request.GET.get("file"))
    response = HttpResponse(data, content_type="application/octet-stream")
    filename = _slug(trace.source_filename) if trace.source_filename else f"trace-{trace.pk}.jsonl"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@access(Access.READ)
@require_safe
def postmortem(request: HttpRequest, trace_id) -> HttpResponse:
    trace = trace_get(trace_id=trace_id, with_report=False)
    source = postmortem_input(trace)  # a long trace's kept input, not its whole report
    pm = build_postmortem(source, trace.name, trace_notes(trace_id=trace.pk))
    notes = notes_context(request, trace, list(pm.notes), "postmortem")
    groups = rule_groups(pm.findings_by_rule, source.get("findings", []), request.GET)
    context = {
        "trace": trace,
        "pm": pm,
        "rule_groups": groups,
        "findings_per_page": FINDINGS_PER_PAGE,
    }
    return render(request, "traces/postmortem.html", context | notes)


@access(Access.READ)
@require_safe
def export_markdown(request: HttpRequest, trace_id) -> HttpResponse:
    trace = trace_get(trace_id=trace_id, with_report=False)
    url = request.build_absolute_uri(reverse("traces:detail", args=[trace.pk]))
    text = render_markdown(postmortem_of(trace), url)
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{_slug(trace.name)}.md"'
    return response


@access(Access.READ)
@require_safe
def export_html(request: HttpRequest, trace_id) -> HttpResponse:
    """One self-contained HTML file (styles, SVG, data inline; no script) to keep or share."""
    trace = trace_get(trace_id=trace_id)
    url = request.build_absolute_uri(reverse("traces:detail", args=[trace.pk]))
    document = render_export(
        trace.report,
        name=trace.name,
        css=app_css(),
        source_url=url,
        notes=trace_notes(trace_id=trace.pk),
    )
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
