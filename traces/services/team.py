"""Writes of a shared instance: API tokens, share links, memberships and the audit log."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from traces import models
from traces.access.rules import SHARES_SESSION_KEY, TOKEN_PREFIX, Principal, digest_of


def audit(
    who: Principal | str,
    action: str,
    *,
    project: models.Project | int | None = None,
    target: str = "",
    **detail: Any,
) -> models.AuditEvent:
    """Record who did what (upload, delete, token.create, share.revoke, …)."""
    if isinstance(who, Principal):
        actor, user = who.label, who.audit_user
    else:
        actor, user = who, None
    project_id = project.pk if isinstance(project, models.Project) else project
    return models.AuditEvent.objects.create(
        project_id=project_id,
        user=user,
        actor=actor[:200],
        action=action,
        target=target[:300],
        detail=detail,
    )


def token_create(
    *,
    who: Principal,
    project: models.Project,
    name: str,
    scopes: list[str],
    expires_in_days: int | None = None,
) -> tuple[models.ApiToken, str]:
    """A new token and its secret, which is shown once and never stored."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
    with transaction.atomic():
        token = models.ApiToken.objects.create(
            user=who.user,
            project=project,
            name=name[:120] or "token",
            prefix=secret[:10],
            digest=digest_of(secret),
            can_read="read" in scopes,
            can_ingest="ingest" in scopes,
            expires_at=expires_at,
        )
        audit(who, "token.create", project=project, target=str(token), scopes=token.scopes)
    return token, secret


def _revoke(row: models.ApiToken | models.ShareLink, record: Callable[[], object]) -> None:
    """Revoke a token or share link once, and `record` its audit line in the same
    transaction; revoking a revoked one does nothing (and logs nothing)."""
    if row.revoked_at is not None:
        return
    with transaction.atomic():
        row.revoked_at = timezone.now()
        row.save(update_fields=["revoked_at"])
        record()


def token_revoke(*, who: Principal, token: models.ApiToken) -> None:
    _revoke(token, lambda: audit(who, "token.revoke", project=token.project_id, target=str(token)))


def share_create(
    *,
    who: Principal,
    trace: models.Trace,
    allow_original: bool = False,
    expires_in_days: int | None = None,
) -> tuple[models.ShareLink, str]:
    """A new share link and its secret (the part of the URL that grants access)."""
    secret = secrets.token_urlsafe(24)
    expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
    with transaction.atomic():
        link = models.ShareLink.objects.create(
            trace=trace,
            created_by=who.audit_user,
            prefix=secret[:6],
            digest=digest_of(secret),
            allow_original=allow_original,
            expires_at=expires_at,
        )
        audit(
            who,
            "share.create",
            project=trace.project_id,
            target=f"{trace.name} ({trace.pk})",
            link=link.prefix,
            allow_original=allow_original,
        )
    return link, secret


def share_revoke(*, who: Principal, link: models.ShareLink) -> None:
    _revoke(
        link,
        lambda: audit(
            who,
            "share.revoke",
            project=link.trace.project_id,
            target=f"{link.trace.name} ({link.trace_id})",
            link=link.prefix,
        ),
    )


def share_open(*, secret: str, session: Any) -> models.ShareLink | None:
    """The live link for a secret, remembered in the session so the trace's pages open."""
    link = (
        models.ShareLink.objects.filter(digest=digest_of(secret), revoked_at__isnull=True)
        .select_related("trace")
        .first()
    )
    if link is None or (link.expires_at is not None and link.expires_at <= timezone.now()):
        return None
    opened = [pk for pk in session.get(SHARES_SESSION_KEY, []) if pk != link.pk]
    session[SHARES_SESSION_KEY] = [*opened[-49:], link.pk]
    return link


def membership_set(*, who: Principal, project: models.Project, user: Any, role: str | None) -> None:
    """Give `user` a role on the project, or remove them (role None)."""
    with transaction.atomic():
        if role is None:
            models.Membership.objects.filter(project=project, user=user).delete()
        else:
            models.Membership.objects.update_or_create(
                project=project, user=user, defaults={"role": role}
            )
        audit(who, "member.set", project=project, target=user.get_username(), role=role)


def project_create(*, who: Principal, name: str, slug: str) -> models.Project:
    with transaction.atomic():
        project = models.Project.objects.create(name=name[:120], slug=slug[:60])
        if who.user is not None:
            models.Membership.objects.create(
                project=project, user=who.user, role=models.Membership.Role.OWNER
            )
        audit(who, "project.create", project=project, target=project.slug)
    return project
