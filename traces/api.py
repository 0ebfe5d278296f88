"""JSON API for scripts and agents: upload a trace, fetch its report.

No CSRF token and, in this local mode (bound to loopback), no credentials.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from traces import deletion, live_api, selectors, services, set_api, team
from traces.access import Access, access, ingest_project, principal
from traces.core.labels import clean_labels


@csrf_exempt
@access(Access.INGEST, uploads=True)
@require_http_methods(["POST"])
def traces_collection(request: HttpRequest) -> JsonResponse:
    """POST a multipart `file` or a raw NDJSON body -> 201 with the new trace's id.

    Several `file` fields make one trace (a session and its subagents' files).
    `labels=a,b` tags the trace; `set=NAME` stores each run of the files in that run set
    instead (see traces.set_api).
    `?live=1` (empty body) creates a live trace instead: see traces.live_api.
    """
    if request.GET.get("live") == "1":
        return live_api.create_live(request)
    set_name = request.POST.get("set") or request.GET.get("set")
    if set_name:
        return set_api.set_ingest_response(request, set_name)
    if request.content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
        files = [(upload.name, upload.read()) for upload in request.FILES.getlist("file")]
    else:
        files = [(request.GET.get("filename", ""), request.body)] if request.body else []
    files = [(filename, data) for filename, data in files if data]
    name = request.POST.get("name") or request.GET.get("name") or ""
    format_name = request.POST.get("format") or request.GET.get("format") or None
    labels = clean_labels(request.POST.getlist("labels") or request.GET.getlist("labels"))
    if not files:
        return JsonResponse(
            {"error": "Send a trace as a multipart 'file' or as the body."}, status=400
        )
    project = ingest_project(request, request.POST.get("project") or request.GET.get("project"))
    if project is None:
        return JsonResponse({"error": "You cannot upload to that project."}, status=403)
    who = principal(request)
    try:
        mapping = services.mapping_from_upload(
            request.FILES.get("mapping"), request.POST.get("mapping") or request.GET.get("mapping")
        )
        result = services.trace_ingest_files(
            files=files,
            name=name,
            format_name=format_name,
            labels=labels,
            project=project,
            created_by=who.audit_user,
            mapping=mapping,
        )
    except services.InputRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    trace = result.trace
    team.audit(who, "trace.upload", project=project, target=f"{trace.name} ({trace.pk})")
    return JsonResponse(
        {
            "id": str(trace.pk),
            "url": request.build_absolute_uri(reverse("traces:detail", args=[trace.pk])),
            "format": trace.format,
            "calls": trace.calls_count,
            "line_errors": trace.report["lines"]["errors"],
            "labels": labels,
        },
        status=201,
    )


@csrf_exempt
@access(Access.READ, DELETE=Access.MEMBER)
@require_http_methods(["GET", "DELETE"])
def trace_report(request: HttpRequest, trace_id) -> JsonResponse:
    """GET: the trace's report. DELETE: remove the trace (and blobs no other trace uses)."""
    trace = selectors.trace_get(trace_id=trace_id)
    if request.method == "DELETE":
        removed = deletion.trace_delete(trace=trace, who=principal(request))
        return JsonResponse({"id": str(trace_id), "deleted": True, "blobs_removed": removed})
    return JsonResponse(trace.report, json_dumps_params={"ensure_ascii": False})
