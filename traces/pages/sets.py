"""Pages of run sets: all sets, one set (outcomes, findings by rule, distributions, the
slowest tools, the runs with the list's filters)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from traces.access.rules import Access, access, local_mode, principal
from traces.pages.listing import list_context
from traces.selectors import sets as set_reads


@access(Access.READ)
@require_safe
def set_list(request: HttpRequest) -> HttpResponse:
    projects = None if local_mode() else principal(request).projects().values("pk")
    return render(request, "traces/sets.html", {"sets": set_reads.set_list(projects=projects)})


@access(Access.READ)
@require_safe
def set_detail(request: HttpRequest, set_id) -> HttpResponse:
    run_set = set_reads.set_get(set_id=set_id)
    base = reverse("traces:set", args=[run_set.pk])
    projects = None if local_mode() else principal(request).projects().values("pk")
    context = set_reads.set_context(run_set, projects=projects)
    context |= list_context(request.GET, principal(request), base=base, fixed_set=str(run_set.pk))
    return render(request, "traces/set.html", context)
