"""JSON API for scripts and agents: upload a trace, fetch its report.

No CSRF token and, in this local mode (bound to loopback), no credentials. Uploads are
parsed and analysed in the ingest pool (`traces.offload`), then stored.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_safe

from traces import live_api, selectors, services
from traces.offload import off_thread
from traces.uploads import UploadRefused, read_upload


@csrf_exempt
@require_http_methods(["POST"])
async def traces_collection(request: HttpRequest) -> JsonResponse:
    """POST a multipart `file` or a raw NDJSON body -> 201 with the new trace's id.

    Several `file` fields make one trace (a session and its subagents' files).
    `?live=1` (empty body) creates a live trace instead: see traces.live_api.
    """
    if request.GET.get("live") == "1":
        return await sync_to_async(live_api.create_live)(request)
    try:
        upload = await off_thread(read_upload, request)
    except UploadRefused as exc:
        return JsonResponse({"error": str(exc)}, status=exc.status)
    if not upload.files:
        return JsonResponse(
            {"error": "Send a trace as a multipart 'file' or as the body."}, status=400
        )
    try:
        prepared = await off_thread(
            services.ingest_prepare,
            files=upload.files,
            name=upload.name,
            format_name=upload.format_name,
        )
    except services.InputRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    trace = (await sync_to_async(services.ingest_store)(prepared)).trace
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


@require_safe
def trace_report(request: HttpRequest, trace_id) -> JsonResponse:
    trace = selectors.trace_get(trace_id=trace_id)
    return JsonResponse(trace.report, json_dumps_params={"ensure_ascii": False})
