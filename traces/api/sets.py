"""JSON API of run sets: upload runs into a set, list sets, read one set, compare runs.

Like the trace API: no CSRF token and, in this local mode, no credentials.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_safe

from traces import models
from traces.access.rules import Access, access, ingest_project, local_mode, principal
from traces.core.labels import clean_labels
from traces.core.reading.limits import InputRejected
from traces.selectors.sets import outcome_key, outcome_rows, rule_rows, set_get, set_list, set_runs
from traces.services import set_ingest
from traces.web.uploads import Upload, UploadRefused, read_upload


def _absolute(request: HttpRequest, name: str, *args) -> str:
    return request.build_absolute_uri(reverse(name, args=list(args)))


def set_ingest_response(
    request: HttpRequest, set_name: str, upload: Upload | None = None
) -> JsonResponse:
    """Store every run of the request's files in the set `set_name`: 201 with what was
    added, what was already there and what could not be read."""
    if upload is None:
        try:
            upload = read_upload(request)
        except UploadRefused as exc:
            return JsonResponse({"error": str(exc)}, status=exc.status)
    if not upload.files:
        return JsonResponse(
            {"error": "Send runs as multipart 'file' fields or as the body."}, status=400
        )
    project = ingest_project(request, upload.field("project") or None)
    if project is None:
        return JsonResponse({"error": "You cannot upload to that project."}, status=403)
    try:
        result = set_ingest.set_upload(
            name=set_name,
            files=upload.files,
            who=principal(request),
            project=project,
            format_name=upload.format_name,
            labels=clean_labels(upload.field_list("labels")),
        )
    except InputRejected as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    run_set = result.run_set
    return JsonResponse(
        {
            "id": str(run_set.pk),
            "name": run_set.name,
            "url": _absolute(request, "traces:set", run_set.pk),
            "added": [
                {
                    "id": str(trace.pk),
                    "name": trace.name,
                    "url": _absolute(request, "traces:detail", trace.pk),
                    "format": trace.format,
                    "calls": trace.calls_count,
                }
                for trace in result.added
            ],
            "duplicates": result.duplicates,
            "rejected": [{"file": name, "error": why} for name, why in result.rejected],
        },
        status=201 if result.added or result.duplicates else 400,
    )


@csrf_exempt
@access(Access.READ, POST=Access.INGEST, uploads=True)
@require_http_methods(["GET", "HEAD", "POST"])
def sets_collection(request: HttpRequest) -> JsonResponse:
    """GET: every set with its run count. POST (`name`, `file`s, optional `format`,
    `labels`): store each run of the files in the set, created when new."""
    if request.method == "POST":
        try:
            upload = read_upload(request)
        except UploadRefused as exc:
            return JsonResponse({"error": str(exc)}, status=exc.status)
        return set_ingest_response(request, upload.field("name") or upload.field("set"), upload)
    return JsonResponse(
        {
            "sets": [
                {
                    "id": str(run_set.pk),
                    "name": run_set.name,
                    "runs": run_set.run_count,
                    "url": _absolute(request, "traces:set", run_set.pk),
                }
                for run_set in set_list(projects=_readable_projects(request))
            ]
        }
    )


def _readable_projects(request: HttpRequest):
    return None if local_mode() else principal(request).projects().values("pk")


@access(Access.READ)
@require_safe
def set_detail(request: HttpRequest, set_id) -> JsonResponse:
    """A set's runs (summary columns), outcome counts and findings by rule."""
    run_set = set_get(set_id=set_id)
    runs = set_runs(run_set)
    return JsonResponse(
        {
            "id": str(run_set.pk),
            "name": run_set.name,
            "runs": [
                {
                    "id": str(run.pk),
                    "name": run.name,
                    "url": _absolute(request, "traces:detail", run.pk),
                    "outcome": outcome_key(run),
                    "calls": run.calls_count,
                    "input_tokens": run.total_input_tokens,
                    "output_tokens": run.output_tokens,
                    "cost_usd": run.cost_usd,
                    "findings": run.flags_count,
                    "wall_time_s": run.wall_time_s,
                }
                for run in runs
            ],
            "outcomes": {row["kind"]: row["count"] for row in outcome_rows(runs)},
            "rules": [
                {k: row[k] for k in ("rule", "severity", "runs", "findings")}
                for row in rule_rows(run_set)
            ],
        },
        json_dumps_params={"ensure_ascii": False},
    )


@access(Access.READ)
@require_safe
def labels_list(request: HttpRequest) -> JsonResponse:
    labels = models.Label.objects.all()
    if not local_mode():
        labels = labels.filter(traces__in=principal(request).traces().values("pk")).distinct()
    return JsonResponse({"labels": list(labels.values_list("name", flat=True))})
