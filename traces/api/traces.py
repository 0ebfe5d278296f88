"""JSON API for scripts and agents: upload a trace, fetch or delete its report.

No CSRF token and, in this local mode (bound to loopback), no credentials. Uploads are
parsed and analysed in the ingest pool (`traces.services.offload`), then stored, by
`traces.services.upload` like every other upload. Creating a live trace and starting a
background upload are endpoints of their own (traces.api.live, traces.api.jobs).
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.db import IntegrityError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from traces import live
from traces.access.rules import Access, access, ingest_project, principal
from traces.api import idempotent
from traces.api.jobs import background_upload, goes_to_background
from traces.api.sets import set_ingest_response
from traces.core.labels import clean_labels
from traces.core.reading.limits import InputRejected
from traces.live.api import create_live
from traces.selectors.traces import trace_get
from traces.services import deletion, idempotency, mappings
from traces.services.offload import off_thread
from traces.services.upload import trace_upload_pooled
from traces.web.uploads import UploadRefused, read_upload


@csrf_exempt
@access(Access.INGEST, uploads=True)
@require_http_methods(["POST"])
async def traces_collection(request: HttpRequest) -> JsonResponse:
    """POST a multipart `file` or a raw NDJSON body -> 201 with the new trace's id.

    Several `file` fields make one trace (a session and its subagents' files).
    `labels=a,b` tags the trace; `set=NAME` stores each run of the files in that run set
    instead (see traces.api.sets).

    Two older forms of this URL stay as aliases of their own endpoints: `?live=1` (empty
    body) is `POST /api/traces/live` (traces.api.live), and a single file over
    INSPECTOR["BACKGROUND_UPLOAD_BYTES"] is `POST /api/jobs` (202 with a job to follow:
    traces.api.jobs).
    """
    if request.GET.get("live") == "1":
        return await sync_to_async(create_live)(request, alias=True)
    if goes_to_background(request):
        answer = await background_upload(request)
        if answer is not None:
            return answer
    return await trace_ingest_response(request)


async def trace_ingest_response(request: HttpRequest) -> JsonResponse:
    """Read the request's upload and store it as one trace (or its runs in a set): 201."""
    try:
        upload = await off_thread(read_upload, request)
    except UploadRefused as exc:
        return JsonResponse({"error": str(exc)}, status=exc.status)
    if upload.field("set"):
        return await sync_to_async(set_ingest_response)(request, upload.field("set"), upload)
    labels = clean_labels(upload.field_list("labels"))
    if not upload.files:
        return JsonResponse(
            {"error": "Send a trace as a multipart 'file' or as the body."}, status=400
        )
    project = await sync_to_async(ingest_project)(request, upload.field("project") or None)
    if project is None:
        return JsonResponse({"error": "You cannot upload to that project."}, status=403)
    try:
        key = idempotency.key_of(request.headers)
        sha256 = await off_thread(idempotency.files_sha256, upload.files) if key else ""
        earlier = key and await sync_to_async(idempotency.earlier_upload)(project, key, sha256)
    except idempotency.KeyRefused as exc:
        return idempotent.refused(exc)
    if earlier:
        return await sync_to_async(idempotent.replay)(request, earlier)
    who = await sync_to_async(principal)(request)
    try:
        mapping = mappings.mapping_from_upload(upload.mapping_file, upload.field("mapping") or None)
        result = await trace_upload_pooled(
            files=upload.files,
            name=upload.name,
            who=who,
            project=project,
            format_name=upload.format_name,
            labels=labels,
            mapping=mapping,
            on_stored=idempotency.remembering(project, key, sha256) if key else None,
        )
    except InputRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    except IntegrityError:
        if not key:
            raise
        return await idempotent.after_lost_race(request, project, key, sha256)
    return idempotent.trace_created(request, result.trace, labels)


@csrf_exempt
@access(Access.READ, DELETE=Access.MEMBER)
@require_http_methods(["GET", "HEAD", "DELETE"])
def trace_report(request: HttpRequest, trace_id) -> JsonResponse:
    """GET: the trace's report. DELETE: remove the trace (and blobs no other trace uses)."""
    trace = trace_get(trace_id=trace_id)
    if request.method == "DELETE":
        removed = deletion.trace_delete(trace=trace, who=principal(request))
        return JsonResponse({"id": str(trace_id), "deleted": True, "blobs_removed": removed})
    report = trace.report
    if trace.state == "live":  # the outcome is decided when the trace closes
        report = {**report, "outcome": dict(live.RUNNING), "held": live.held_messages(trace)}
    return JsonResponse(report, json_dumps_params={"ensure_ascii": False})
