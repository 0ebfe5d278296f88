"""Pages of a shared instance: API tokens, projects (members, settings, audit log),
share links and deleting a trace. Each declares its rule with @access."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from traces import models
from traces.access.rules import ROLE_RANK, Access, access, principal
from traces.core.reading.sample import sample_bytes
from traces.selectors.traces import trace_get
from traces.services import deletion, team
from traces.services.upload import trace_upload
from traces.web.redirects import next_url

EXPIRY_CHOICES = (("", "Never"), ("7", "7 days"), ("30", "30 days"), ("90", "90 days"))


def _days(value: str | None) -> int | None:
    try:
        days = int(value or "")
    except ValueError:
        return None
    return days if 0 < days <= 3650 else None


# -- API tokens ---------------------------------------------------------------------------------
@access(Access.ACCOUNT)
@require_http_methods(["GET", "HEAD", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """The user's tokens; POST creates one and shows its secret once."""
    who = principal(request)
    roles = who.roles
    projects = models.Project.objects.filter(pk__in=list(roles)).order_by("name")
    error, created, secret = "", None, ""
    if request.method == "POST":
        project = projects.filter(slug=request.POST.get("project", "")).first()
        scopes = [s for s in ("read", "ingest") if request.POST.get(f"scope_{s}")]
        if project is None:
            error = "Choose one of your projects."
        elif not scopes:
            error = "Choose at least one scope."
        elif "ingest" in scopes and ROLE_RANK[roles[project.pk]] < ROLE_RANK["member"]:
            error = f"You are a viewer of {project.name}: an ingest token needs member role."
        else:
            created, secret = team.token_create(
                who=who,
                project=project,
                name=request.POST.get("name", "").strip(),
                scopes=scopes,
                expires_in_days=_days(request.POST.get("expires")),
            )
    listed = models.ApiToken.objects.filter(user=who.user).select_related("project")
    return render(
        request,
        "accounts/tokens.html",
        {
            "tokens": listed,
            "projects": projects,
            "expiry_choices": EXPIRY_CHOICES,
            "error": error,
            "created": created,
            "secret": secret,
            "base_url": request.build_absolute_uri("/").rstrip("/"),
        },
        status=400 if error else 200,
    )


@access(Access.ACCOUNT)
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    """Revoke one of your tokens (a project owner may revoke any token of the project)."""
    who = principal(request)
    token = get_object_or_404(models.ApiToken, pk=token_id)
    if token.user_id != who.user.pk and who.roles.get(token.project_id) != "owner":
        raise Http404("No such token")
    team.token_revoke(who=who, token=token)
    messages.success(request, f"Token {token.name} revoked.")
    return redirect(next_url(request, reverse("team:tokens")))


# -- projects -----------------------------------------------------------------------------------
@access(Access.ACCOUNT)
@require_http_methods(["GET", "HEAD", "POST"])
def projects(request: HttpRequest) -> HttpResponse:
    who = principal(request)
    error = ""
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        slug = slugify(name)[:60]
        if not slug:
            error = "Give the project a name."
        elif models.Project.objects.filter(slug=slug).exists():
            error = f"A project called {slug} exists already."
        else:
            project = team.project_create(who=who, name=name, slug=slug)
            if request.POST.get("sample"):
                sample = trace_upload(
                    files=[("sample.jsonl", sample_bytes())],
                    name="Sample: a small parallel tool loop",
                    who=who,
                    project=project,
                ).trace
                messages.success(request, f"Project {project.name} created, with a sample.")
                return redirect(reverse("traces:detail", args=[sample.pk]))
            return redirect(reverse("team:project", args=[project.slug]))
    rows = [
        (project, who.roles.get(project.pk))
        for project in models.Project.objects.filter(pk__in=list(who.roles)).order_by("name")
    ]
    return render(
        request,
        "accounts/projects.html",
        {"rows": rows, "error": error},
        status=400 if error else 200,
    )


@access(Access.OWNER)
@require_http_methods(["GET", "HEAD", "POST"])
def project(request: HttpRequest, project: str) -> HttpResponse:
    """Settings, members and the audit log of one project (owners only)."""
    who = principal(request)
    found = get_object_or_404(models.Project, slug=project)
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "settings":
            found.keep_originals = bool(request.POST.get("keep_originals"))
            found.retention_days = _days(request.POST.get("retention_days"))
            found.save(update_fields=["keep_originals", "retention_days"])
            team.audit(
                who,
                "project.settings",
                project=found,
                target=found.slug,
                keep_originals=found.keep_originals,
                retention_days=found.retention_days,
            )
            messages.success(request, "Settings saved.")
        elif action == "member":
            _member_change(request, who, found)
        return redirect(reverse("team:project", args=[found.slug]))
    return render(
        request,
        "accounts/project.html",
        {
            "project": found,
            "memberships": found.memberships.select_related("user").order_by("user__username"),
            "roles": models.Membership.Role.choices,
            "events": found.audit_events.select_related("user")[:200],
            "tokens": found.api_tokens.select_related("user").filter(revoked_at__isnull=True),
        },
    )


def _member_change(request: HttpRequest, who, project: models.Project) -> None:
    username = request.POST.get("username", "").strip()
    user = get_user_model().objects.filter(username=username).first()
    role = request.POST.get("role") or None
    if user is None:
        messages.error(request, f"No user called {username}.")
        return
    if role not in (None, *models.Membership.Role.values):
        messages.error(request, "Choose a role.")
        return
    owners = project.memberships.filter(role="owner").exclude(user=user)
    if role != "owner" and not owners.exists():
        messages.error(request, "A project keeps at least one owner.")
        return
    team.membership_set(who=who, project=project, user=user, role=role)
    messages.success(request, f"{username}: {role or 'removed'}.")


# -- share links and deletion -----------------------------------------------------------------
@access(Access.MEMBER)
@require_http_methods(["GET", "HEAD", "POST"])
def share(request: HttpRequest, trace_id) -> HttpResponse:
    """A trace's share links; POST makes a new one and shows its URL once."""
    trace = trace_get(trace_id=trace_id, with_report=False)
    who = principal(request)
    url = ""
    if request.method == "POST":
        _link, secret = team.share_create(
            who=who,
            trace=trace,
            allow_original=bool(request.POST.get("allow_original")),
            expires_in_days=_days(request.POST.get("expires")),
        )
        url = request.build_absolute_uri(reverse("team:shared", args=[secret]))
    return render(
        request,
        "accounts/share.html",
        {
            "trace": trace,
            "links": trace.share_links.select_related("created_by"),
            "url": url,
            "expiry_choices": EXPIRY_CHOICES,
        },
    )


@access(Access.MEMBER)
@require_POST
def share_revoke(request: HttpRequest, trace_id, link_id: int) -> HttpResponse:
    link = get_object_or_404(models.ShareLink, pk=link_id, trace_id=trace_id)
    team.share_revoke(who=principal(request), link=link)
    messages.success(request, "Share link revoked: it no longer opens the trace.")
    return redirect(reverse("team:share", args=[trace_id]))


@access(Access.PUBLIC)
@require_safe
def shared(request: HttpRequest, secret: str) -> HttpResponse:
    """A share link: its secret is the credential. Opens the trace read-only."""
    link = team.share_open(secret=secret, session=request.session)
    if link is None:
        return render(
            request,
            "accounts/denied.html",
            {"message": "This share link was revoked or has expired."},
            status=410,
        )
    return redirect(reverse("traces:detail", args=[link.trace_id]))


@access(Access.MEMBER)
@require_http_methods(["GET", "HEAD", "POST"])
def delete(request: HttpRequest, trace_id) -> HttpResponse:
    trace = trace_get(trace_id=trace_id, with_report=False)
    if request.method == "POST":
        deletion.trace_delete(trace=trace, who=principal(request))
        messages.success(request, f"Deleted {trace.name}.")
        return redirect(reverse("traces:list"))
    return render(request, "accounts/delete.html", {"trace": trace})
