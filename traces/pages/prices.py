"""The prices page of a project: set a price for a model the library does not price
(or any model), so later ingests and `reanalyze` use it (members and owners; audit-logged).
Saving can re-price the project's traces of that model at once (a reanalysis job each)."""

from __future__ import annotations

import math

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from traces import models
from traces.access.rules import Access, access, principal
from traces.services import prices
from traces.services.jobs import queue_reanalysis

PRICE_FIELDS = (
    ("input", "Input", True),
    ("output", "Output", True),
    ("cache_write", "Cache write (5 min)", False),
    ("cache_read", "Cache read", False),
    ("cache_write_1h", "Cache write (1 hour)", False),
)
MAX_PRICE = 100_000.0
"""USD per million tokens: far above any published price, low enough to catch a typo."""


def _number(raw: str, label: str, required: bool) -> tuple[float | None, str | None]:
    text = raw.strip().replace(",", ".").lstrip("$")
    if not text:
        return None, (f"{label}: a price is needed." if required else None)
    try:
        value = float(text)
    except ValueError:
        return None, f"{label}: {raw[:40]!r} is not a number."
    if not math.isfinite(value) or value < 0 or value > MAX_PRICE:
        return None, f"{label}: give a price from 0 to {MAX_PRICE:,.0f} USD per million tokens."
    return value, None


def _read_form(post) -> tuple[str, dict[str, float | None], list[str]]:
    model = post.get("model", "").strip()
    errors = [] if 0 < len(model) <= 200 else ["Model: a name of 1 to 200 characters is needed."]
    values: dict[str, float | None] = {}
    for key, label, required in PRICE_FIELDS:
        values[key], error = _number(post.get(key, ""), label, required)
        if error:
            errors.append(error)
    return model, values, errors


@access(Access.MEMBER)
@require_http_methods(["GET", "HEAD", "POST"])
def project_prices(request: HttpRequest, project: str) -> HttpResponse:
    """The prices set in a project, and the form to set one (`?model=` fills it in)."""
    found = get_object_or_404(models.Project, slug=project)
    errors: list[str] = []
    model = request.GET.get("model", "")[:200]
    if request.method == "POST":
        who = principal(request)
        if request.POST.get("action") == "delete":
            prices.price_delete(who=who, project=found, model=request.POST.get("model", ""))
            messages.success(request, "Price removed.")
            return redirect(reverse("team:prices", args=[found.slug]))
        model, values, errors = _read_form(request.POST)
        if not errors:
            row = prices.price_set(who=who, project=found, model=model, values=values)
            queued = 0
            if request.POST.get("reprice"):
                for trace in models.Trace.objects.filter(project=found, model__iexact=row.model):
                    queue_reanalysis(trace)
                    queued += 1
            messages.success(
                request,
                f"Price for {row.model} saved."
                + (f" Re-pricing {queued} trace{'s' if queued != 1 else ''}." if queued else ""),
            )
            return redirect(reverse("team:prices", args=[found.slug]))
    return render(
        request,
        "accounts/prices.html",
        {
            "project": found,
            "rows": found.model_prices.all(),
            "fields": PRICE_FIELDS,
            "model": model,
            "values": request.POST if errors else {},
            "errors": errors,
        },
        status=400 if errors else 200,
    )
