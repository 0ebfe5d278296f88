"""Deleting traces: their rows, then the content-addressed blobs no other trace uses.

Blobs are shared between traces (two runs with the same system prompt store it once), so
a blob goes only when no remaining call or tool run names its digest.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from traces import models
from traces.access.rules import Principal
from traces.services import team

CALL_DIGEST_FIELDS = (
    "system_digest",
    "tools_digest",
    "response_digest",
    "response_message_digest",
    "extra_digest",
)
CALL_DIGEST_LISTS = ("appended_digests", "appended_message_digests")


def _digests_of(trace_ids: list[Any]) -> set[str]:
    found: set[str] = set()
    calls = models.Call.objects.filter(trace__in=trace_ids)
    width = len(CALL_DIGEST_FIELDS)
    for row in calls.values_list(*CALL_DIGEST_FIELDS, *CALL_DIGEST_LISTS).iterator():
        found.update(row[:width])
        for digests in row[width:]:
            found.update(digests or ())
    runs = models.ToolRun.objects.filter(trace__in=trace_ids)
    found.update(runs.values_list("input_digest", flat=True).iterator())
    found.discard("")
    return found


def _still_used(candidates: set[str]) -> set[str]:
    """Which of the candidate digests a remaining call or tool run names.

    The message digests live in a JSON list per call, which SQLite cannot index or
    search: those lists are streamed once (only for calls of traces that hold a
    candidate somewhere is not knowable without reading them).
    """
    used: set[str] = set()
    wanted = list(candidates)
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        for name in CALL_DIGEST_FIELDS:
            used.update(
                models.Call.objects.filter(**{f"{name}__in": part}).values_list(name, flat=True)
            )
        used.update(
            models.ToolRun.objects.filter(input_digest__in=part).values_list(
                "input_digest", flat=True
            )
        )
    for lists in models.Call.objects.values_list(*CALL_DIGEST_LISTS).iterator(chunk_size=2000):
        for digests in lists:
            if digests:
                used.update(candidates.intersection(digests))
    return used


def traces_delete(*, traces: list[models.Trace], who: Principal | str, reason: str) -> int:
    """Delete traces and the blobs only they used; one audit event each. Blobs removed."""
    if not traces:
        return 0
    ids = [trace.pk for trace in traces]
    with transaction.atomic():
        candidates = _digests_of(ids)
        for trace in traces:
            team.audit(
                who,
                "trace.delete",
                project=trace.project_id,
                target=f"{trace.name} ({trace.pk})",
                reason=reason,
                calls=trace.calls_count,
            )
        models.Trace.objects.filter(pk__in=ids).delete()
        unused = candidates - _still_used(candidates)
        # Lock them, then look again: an ingest that is reusing one of these blobs holds
        # its lock until it commits, and its calls are visible to the second look.
        locked: set[str] = set()
        wanted = list(unused)
        for start in range(0, len(wanted), 500):
            locked.update(
                models.Blob.objects.select_for_update()
                .filter(digest__in=wanted[start : start + 500])
                .values_list("digest", flat=True)
            )
        unused = locked - _still_used(locked)
        unused_list = list(unused)
        for start in range(0, len(unused_list), 500):
            models.Blob.objects.filter(digest__in=unused_list[start : start + 500]).delete()
    return len(unused)


def trace_delete(*, trace: models.Trace, who: Principal | str) -> int:
    return traces_delete(traces=[trace], who=who, reason="deleted")


def expired_traces(now=None) -> list[models.Trace]:
    """Traces older than their project's retention period (live ones are left running)."""
    now = now or timezone.now()
    found: list[models.Trace] = []
    for project in models.Project.objects.filter(retention_days__isnull=False):
        cutoff = now - timedelta(days=project.retention_days)
        found.extend(
            models.Trace.objects.filter(project=project, created_at__lt=cutoff)
            .exclude(state=models.Trace.State.LIVE)
            .defer("report")
        )
    return found
