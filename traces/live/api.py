"""JSON API of live traces: create one, append NDJSON lines by offset, close it.

`POST /api/traces/live` (the endpoint is traces.api.live; `POST /api/traces?live=1` is
its alias) -> 201 `{"id", "url", "state": "live"}`; `POST /api/traces/<id>/lines?offset=N`
with NDJSON lines as the body -> `{"total": M, "accepted": k}`, or 409 `{"expected": M}`
when N is beyond the stored lines; `GET` of the same URL -> `{"total", "state"}` (where to resume);
`POST /api/traces/<id>/close` -> `{"state": "closed", ...}`. Like the rest of the API:
no CSRF token and, in this local mode, no credentials.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from traces import models
from traces.access.rules import Access, access, ingest_project, principal
from traces.core.reading.limits import InputRejected
from traces.live import writes as live
from traces.live.idle import request_sweep
from traces.services import team

FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


def create_live(request: HttpRequest, *, alias: bool = False) -> JsonResponse:
    """A new live trace; `name` and `format` from the query string or form fields.

    Lines are never taken here: a body that is not a form (or a form with a file) is
    refused rather than silently dropped, in the words of the URL called (`alias`: the
    older `POST /api/traces?live=1`).
    """
    is_form = request.content_type in FORM_TYPES
    sent = int(request.META.get("CONTENT_LENGTH") or 0) > 0
    if sent and (not is_form or request.FILES):
        called, whole = (
            ("?live=1", "leave out ?live=1")
            if alias
            else ("POST /api/traces/live", "POST it to /api/traces")
        )
        return JsonResponse(
            {
                "error": f"{called} creates an empty live trace and takes no lines: POST it "
                "with an empty body, then send the lines to the 'lines_url' it returns "
                f"(POST /api/traces/<id>/lines?offset=0). To upload a whole file, {whole}."
            },
            status=400,
        )
    name = request.POST.get("name") or request.GET.get("name") or ""
    format_name = request.POST.get("format") or request.GET.get("format") or None
    project = ingest_project(request, request.POST.get("project") or request.GET.get("project"))
    if project is None:
        return JsonResponse({"error": "You cannot create traces in that project."}, status=403)
    who = principal(request)
    request_sweep()  # the idle traces are closed by a queue task, off this request
    try:
        trace = live.create_live_trace(
            name=name, format_name=format_name, project=project, created_by=who.audit_user
        )
    except InputRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    team.audit(who, "trace.live", project=project, target=f"{trace.name} ({trace.pk})")
    return JsonResponse(
        {
            "id": str(trace.pk),
            "url": request.build_absolute_uri(reverse("traces:detail", args=[trace.pk])),
            "lines_url": request.build_absolute_uri(reverse("live:lines", args=[trace.pk])),
            "state": trace.state,
        },
        status=201,
    )


@csrf_exempt
@access(Access.INGEST)
@require_http_methods(["GET", "HEAD", "POST"])
def trace_lines(request: HttpRequest, trace_id) -> JsonResponse:
    if request.method in ("GET", "HEAD"):
        try:
            return JsonResponse(live.live_status(trace_id=trace_id))
        except models.Trace.DoesNotExist:
            return _not_found()
    try:
        offset = int(request.GET.get("offset", ""))
    except ValueError:
        return JsonResponse(
            {"error": "Say where this batch starts: ?offset=<lines sent before it>."}, status=400
        )
    try:
        result = live.append_lines(
            trace_id=trace_id, offset=offset, lines=live.split_body(request.body)
        )
    except models.Trace.DoesNotExist:
        return _not_found()
    except live.OffsetGap as gap:
        return JsonResponse({"error": str(gap), "expected": gap.expected}, status=409)
    except live.TraceNotLive as not_live:
        return JsonResponse({"error": str(not_live), "state": not_live.state}, status=409)
    except InputRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse({"total": result.total, "accepted": result.accepted})


@csrf_exempt
@access(Access.INGEST)
@require_POST
def trace_close(request: HttpRequest, trace_id) -> JsonResponse:
    try:
        trace = live.close_live_trace(trace_id=trace_id)
    except models.Trace.DoesNotExist:
        return _not_found()
    return JsonResponse(
        {
            "id": str(trace.pk),
            "state": trace.state,
            "total": trace.lines_total,
            "calls": trace.calls_count,
            "findings": trace.flags_count,
        }
    )


def _not_found() -> JsonResponse:
    return JsonResponse({"error": "No such trace."}, status=404)
