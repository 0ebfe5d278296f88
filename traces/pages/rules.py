"""The /rules/ pages, generated from each rule's docstring."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from traces.access.rules import Access, access
from traces.core.analysis.rules.registry import get_rule, rules

SECTIONS = ("What it finds", "Why it matters", "Example", "How to fix")


def _reflow(text: str) -> str:
    """Docstring paragraphs as flowing text: source line breaks are not the page's."""
    paragraphs = [" ".join(part.split()) for part in text.split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def _entry(rule) -> dict:
    docs = rule.documentation()
    return {
        "id": rule.id,
        "severity": rule.severity,
        "summary": docs.get("summary", ""),
        "sections": [
            (
                title,
                _reflow(docs.get(title.lower(), ""))
                if title != "Example"
                else docs.get(title.lower(), ""),
            )
            for title in SECTIONS
        ],
        "defaults": rule.defaults,
        "message": rule.message,
    }


@access(Access.READ)
@require_safe
def rule_list(request: HttpRequest) -> HttpResponse:
    entries = sorted(
        (_entry(r) for r in rules()),
        key=lambda e: (e["severity"] != "error", e["severity"] != "warning", e["id"]),
    )
    return render(request, "rules/list.html", {"rules": entries})


@access(Access.READ)
@require_safe
def rule_detail(request: HttpRequest, rule_id: str) -> HttpResponse:
    try:
        rule = get_rule(rule_id)
    except KeyError as exc:
        raise Http404("No such rule") from exc
    return render(request, "rules/detail.html", {"rule": _entry(rule)})
