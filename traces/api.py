"""JSON API for scripts and agents: upload a trace, fetch its report.

No CSRF token and, in this local mode (bound to loopback), no credentials.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from traces import live, live_api, selectors, services


@csrf_exempt
@require_http_methods(["POST"])
def traces_collection(request: HttpRequest) -> JsonResponse:
    """POST a multipart `file` or a raw NDJSON body -> 201 with the new trace's id.

    Several `file` fields make one trace (a session and its subagents' files).
    `?live=1` (empty body) creates a live trace instead: see traces.live_api.
    """
    if request.GET.get("live") == "1":
        return live_api.create_live(request)
    if request.content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
        files = [(upload.name, upload.read()) for upload in request.FILES.getlist("file")]
    else:
        files = [(request.GET.get("filename", ""), request.body)] if request.body else []
    files = [(filename, data) for filename, data in files if data]
    name = request.POST.get("name") or request.GET.get("name") or ""
    format_name = request.POST.get("format") or request.GET.get("format") or None
    if not files:
        return JsonResponse(
            {"error": "Send a trace as a multipart 'file' or as the body."}, status=400
        )
    try:
        result = services.trace_ingest_files(files=files, name=name, format_name=format_name)
    except services.InputRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    trace = result.trace
    return JsonResponse(
        {
            "id": str(trace.pk),
            "url": request.build_absolute_uri(reverse("traces:detail", args=[trace.pk])),
            "format": trace.format,
            "calls": trace.calls_count,
            "line_errors": trace.report["lines"]["errors"],
        },
        status=201,
    )


@require_GET
def trace_report(request: HttpRequest, trace_id) -> JsonResponse:
    trace = selectors.trace_get(trace_id=trace_id)
    report = trace.report
    if trace.state == "live":  # the outcome is decided when the trace closes
        report = {**report, "outcome": live.RUNNING, "held": live.held_messages(trace)}
    return JsonResponse(report, json_dumps_params={"ensure_ascii": False})
