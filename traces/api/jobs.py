"""The HTTP side of background jobs: take an upload as a job (202), and answer a job's state.

`POST /api/jobs` with one file (multipart `file`, or the raw body) streams it to
INSPECTOR_DATA_DIR and answers `202 {"id", "state", "status_url", ...}` at once;
`GET /api/jobs/<id>` then says the state, bytes read, records parsed, calls rebuilt, the
error if it failed and the trace's URL when done. A single file over
INSPECTOR["BACKGROUND_UPLOAD_BYTES"] sent to `POST /api/traces` is taken the same way
(the older form, kept as an alias); there everything else (several files, a run set, a
mapping file, small uploads) stays on the synchronous path of traces.api.traces, while
`POST /api/jobs` refuses it.
"""

from __future__ import annotations

from collections.abc import Iterable

from asgiref.sync import sync_to_async
from django.db import IntegrityError
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from traces import models
from traces.access.rules import Access, access, ingest_project, principal
from traces.api import idempotent
from traces.conf import inspector_settings
from traces.core.labels import clean_labels
from traces.services import idempotency, jobs
from traces.services.offload import off_thread
from traces.web.uploads import MULTIPART, UploadRefused, parsed_form


def goes_to_background(request: HttpRequest) -> bool:
    size = int(request.META.get("CONTENT_LENGTH") or 0)
    threshold = int(inspector_settings()["BACKGROUND_UPLOAD_BYTES"])
    return 0 < threshold < size and not request.GET.get("set") and not request.GET.get("live")


async def background_upload(request: HttpRequest) -> JsonResponse | None:
    """202 and the job for a large single-file upload; None to take the synchronous path."""
    size = int(request.META.get("CONTENT_LENGTH") or 0)
    limit = int(inspector_settings()["MAX_UPLOAD_BYTES"])
    if size > limit:
        return JsonResponse(
            {"error": f"The upload is {size:,} bytes; the limit is {limit:,}."}, status=413
        )
    chunks: Iterable[bytes]
    declared: int | None = size if request.META.get("CONTENT_LENGTH") else None  # chunked
    if request.content_type == MULTIPART:
        try:
            fields, files = await off_thread(parsed_form, request)
        except UploadRefused as exc:
            return JsonResponse({"error": str(exc)}, status=exc.status)
        uploads = files.getlist("file")
        if len(uploads) != 1 or fields.get("set") or files.get("mapping") or fields.get("mapping"):
            return None
        upload = uploads[0]
        filename = upload.name or ""
        chunks = upload.chunks(jobs.READ_CHUNK)
        declared = upload.size
        merged = request.GET.copy()
        for key in fields:
            merged.setlist(key, fields.getlist(key))
        fields = merged
    else:
        fields = request.GET
        filename = fields.get("filename", "")
        chunks = iter(lambda: request.read(jobs.READ_CHUNK), b"")
    project = await sync_to_async(ingest_project)(request, fields.get("project") or None)
    if project is None:
        return JsonResponse({"error": "You cannot upload to that project."}, status=403)
    who = await sync_to_async(principal)(request)
    options = {
        "name": fields.get("name") or "",
        "format": fields.get("format") or "",
        "labels": clean_labels(fields.getlist("labels")),
        "who": who.label,
    }
    try:
        key = idempotency.key_of(request.headers)
    except idempotency.KeyRefused as exc:
        return idempotent.refused(exc)
    try:
        received = await off_thread(jobs.receive_upload, chunks, declared=declared)
    except jobs.IncompleteUpload as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    if not received.size:
        await off_thread(jobs.forget_upload, received)
        return JsonResponse(
            {"error": "Send a trace as a multipart 'file' or as the body."}, status=400
        )
    try:
        earlier = key and await sync_to_async(idempotency.earlier_upload)(
            project, key, received.sha256
        )
    except idempotency.KeyRefused as exc:
        await off_thread(jobs.forget_upload, received)
        return idempotent.refused(exc)
    if earlier:
        await off_thread(jobs.forget_upload, received)
        return await sync_to_async(idempotent.replay)(request, earlier)
    try:
        job = await sync_to_async(jobs.new_upload_job)(
            filename=filename,
            received=received,
            options=options,
            project=project,
            created_by=who.audit_user,
            key=key,
        )
    except IntegrityError:
        await off_thread(jobs.forget_upload, received)
        if not key:
            raise
        return await idempotent.after_lost_race(request, project, key, received.sha256)
    await sync_to_async(jobs.queue_upload_job)(job)
    job = await sync_to_async(models.Job.objects.get)(pk=job.pk)
    return idempotent.job_accepted(request, job)


@csrf_exempt
@access(Access.INGEST, uploads=True)
@require_POST
async def jobs_collection(request: HttpRequest) -> JsonResponse:
    """202 and the job of one trace file, whatever its size; 400 for what a job does not
    take (several files, a run set, a mapping file)."""
    answer = None if request.GET.get("set") else await background_upload(request)
    if answer is None:
        return JsonResponse(
            {
                "error": "A background upload is one trace file, without a run set or a "
                "mapping: send several files, a set or a mapping to POST /api/traces."
            },
            status=400,
        )
    return answer


@csrf_exempt
@access(Access.INGEST)
@require_http_methods(["GET", "HEAD"])
def job_detail(request: HttpRequest, job_id) -> JsonResponse:
    """A job's state, for whoever may upload to its project."""
    job = models.Job.objects.filter(pk=job_id).first()
    if job is None or not principal(request).allows(Access.INGEST, job.project_id):
        return JsonResponse({"error": "No such job."}, status=404)
    if jobs.is_stale(job) and jobs.recover(job):  # its worker died: someone is waiting
        job = models.Job.objects.get(pk=job.pk)
    return JsonResponse(jobs.job_status(job, request))
