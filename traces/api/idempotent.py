"""The answers of uploads sent again with their `Idempotency-Key` (traces.services.idempotency).

A trace the key already made answers as its first upload did (201, the same fields); a
job answers with its state now (202 while it runs, then its trace); both say
`Idempotent-Replayed: true`, so a client can tell a replay from a new upload.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.http import HttpRequest, JsonResponse
from django.urls import reverse

from traces import models
from traces.services import idempotency, jobs


def trace_created(request: HttpRequest, trace: models.Trace, labels: list[str]) -> JsonResponse:
    """201 and what a client is told of a stored trace."""
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


def job_accepted(request: HttpRequest, job: models.Job) -> JsonResponse:
    """202 and the job's state, with its status URL in Location."""
    status = jobs.job_status(job, request)
    response = JsonResponse(status, status=202)
    response["Location"] = status["status_url"]
    return response


def replay(request: HttpRequest, earlier: idempotency.Earlier) -> JsonResponse:
    """The answer to an upload sent again: what its key made, as it stands now."""
    if earlier.trace is not None:
        trace = earlier.trace
        labels = sorted(trace.labels.values_list("name", flat=True))
        response = trace_created(request, trace, labels)
    else:
        assert earlier.job is not None  # loaded with the key, as it stands now
        response = job_accepted(request, earlier.job)
    response["Idempotent-Replayed"] = "true"
    return response


async def after_lost_race(
    request: HttpRequest, project: models.Project, key: str, sha256: str
) -> JsonResponse:
    """The answer of an upload whose commit failed on its key: another upload with the same
    key committed first, so answer with what that one made."""
    try:
        earlier = await sync_to_async(idempotency.earlier_upload)(project, key, sha256)
    except idempotency.KeyRefused as exc:
        return refused(exc)
    if earlier is None:  # the failure was not the key's
        raise RuntimeError("an upload's commit failed, and not on its Idempotency-Key")
    return await sync_to_async(replay)(request, earlier)


def refused(exc: idempotency.KeyRefused) -> JsonResponse:
    return JsonResponse({"error": str(exc)}, status=exc.status)
