"""Who is asking: the principal behind a request or websocket, and what it may do.

A principal is the logged-in user, or the API token sent (`Authorization: Bearer li_…` or
`X-Loop-Inspector-Token`), plus the share links opened in the session. `Principal.allows`
answers a rule (`Access`) on a project from the user's role and the token's scope; the
declarations and their enforcement on each endpoint are in `traces.access.rules`.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from types import MappingProxyType
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from traces import models
from traces.access.cross_site import local_mode

ROLE_RANK = MappingProxyType({"viewer": 1, "member": 2, "owner": 3})
TOKEN_PREFIX = "li_"
SHARES_SESSION_KEY = "inspector_shares"
LAST_USED_EVERY = timedelta(seconds=60)


class Access(enum.Enum):
    PUBLIC = "public"
    ACCOUNT = "account"
    READ = "read"
    INGEST = "ingest"
    ORIGINAL = "original"
    MEMBER = "member"
    OWNER = "owner"
    LOCAL = "local"
    """This machine only: local mode and a loopback client (pages that read or drive this
    machine's own files); anyone else gets the 404 of a page that does not exist."""


ROLE_NEEDED = MappingProxyType(
    {
        Access.READ: "viewer",
        Access.INGEST: "member",
        Access.ORIGINAL: "member",
        Access.MEMBER: "member",
        Access.OWNER: "owner",
    }
)
TOKEN_SCOPE = MappingProxyType(
    {
        Access.READ: "read",
        Access.INGEST: "ingest",
        Access.ORIGINAL: "read",
        Access.MEMBER: "ingest",
    }
)
"""The scope a token needs per rule (besides its user's role); OWNER needs a session."""


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class BadToken(Exception):
    """A token that is not usable (unknown, revoked, expired)."""


@dataclass
class Principal:
    """The user, API token and share links behind one request or websocket."""

    user: Any = None
    token: models.ApiToken | None = None
    share_ids: list[int] = field(default_factory=list)

    @property
    def authenticated(self) -> bool:
        return self.user is not None and self.user.is_authenticated

    @property
    def label(self) -> str:
        """Who, for the audit log."""
        if self.token is not None:
            return f"token {self.token.name} ({self.token.prefix}…) of {self.token.user}"
        if self.authenticated:
            return self.user.get_username()
        return "local user" if local_mode() else "anonymous"

    @property
    def audit_user(self):
        if self.token is not None:
            return self.token.user
        return self.user if self.authenticated else None

    @cached_property
    def roles(self) -> dict[int, str]:
        """Project id -> role of the user (or of the token's user, on its one project)."""
        if self.token is not None:
            role = (
                models.Membership.objects.filter(
                    user=self.token.user, project=self.token.project_id
                )
                .values_list("role", flat=True)
                .first()
            )
            return {self.token.project_id: role} if role else {}
        if not self.authenticated:
            return {}
        rows = models.Membership.objects.filter(user=self.user).values_list("project", "role")
        return dict(rows)

    @cached_property
    def shares(self) -> dict[str, models.ShareLink]:
        """Trace id -> a live share link opened in this session."""
        if not self.share_ids:
            return {}
        now = timezone.now()
        links = models.ShareLink.objects.filter(pk__in=self.share_ids, revoked_at__isnull=True)
        links = links.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        return {str(link.trace_id): link for link in links}

    def allows(self, rule: Access, project_id: int | None) -> bool:
        """The rule on one project (or, with None, on at least one project)."""
        if rule is Access.PUBLIC:
            return True
        if rule is Access.ACCOUNT:
            return self.authenticated and self.token is None
        if rule is Access.LOCAL:
            return local_mode()  # the client's address is checked by `rules.check`
        if local_mode():
            return True
        if self.token is not None and not self._token_scope_ok(rule):
            return False
        needed = ROLE_RANK[ROLE_NEEDED[rule]]
        if project_id is None:
            return any(ROLE_RANK[role] >= needed for role in self.roles.values())
        role = self.roles.get(project_id)
        return role is not None and ROLE_RANK[role] >= needed

    def _token_scope_ok(self, rule: Access) -> bool:
        scope = TOKEN_SCOPE.get(rule)
        return scope is not None and scope in self.token.scopes

    def allows_trace(self, rule: Access, trace_id: Any, project_id: int) -> bool:
        if self.allows(rule, project_id):
            return True
        link = self.shares.get(str(trace_id))
        if link is None:
            return False
        return rule is Access.READ or (rule is Access.ORIGINAL and link.allow_original)

    def projects(self, rule: Access = Access.READ) -> QuerySet[models.Project]:
        """The projects on which this principal has `rule`."""
        if local_mode():
            return models.Project.objects.all()
        ids = [pk for pk in self.roles if self.allows(rule, pk)]
        return models.Project.objects.filter(pk__in=ids)

    def traces(self, queryset: QuerySet[models.Trace] | None = None) -> QuerySet[models.Trace]:
        """What lists, search and compare may show: traces of the readable projects."""
        queryset = models.Trace.objects.all() if queryset is None else queryset
        if local_mode():
            return queryset
        return queryset.filter(project__in=self.projects(Access.READ).values_list("pk", flat=True))


# -- resolving the principal ------------------------------------------------------------------
TOKEN_HEADER = "X-Loop-Inspector-Token"
"""Where a token goes when `Authorization` must carry something else (a recording proxy
forwards the agent's own provider key in it)."""


def our_token(authorization: str | None, token_header: str | None) -> str | None:
    """The Loop Inspector token sent, if any: `X-Loop-Inspector-Token: li_…`, else
    `Authorization: Bearer li_…`; any other Authorization value is not ours to judge."""
    if token_header:
        return token_header.strip()
    kind, _, secret = (authorization or "").strip().partition(" ")
    if kind.lower() == "bearer" and secret.strip().startswith(TOKEN_PREFIX):
        return secret.strip()
    return None


def principal_from(secret: str | None, user: Any, session: Any) -> Principal:
    """The principal of a request or websocket scope; BadToken for a bad token."""
    token = None
    if secret and not local_mode():
        token = token_from_secret(secret)
    share_ids = []
    if session is not None:
        share_ids = [int(pk) for pk in session.get(SHARES_SESSION_KEY, [])]
    if user is not None and not user.is_authenticated:
        user = None
    return Principal(user=None if token else user, token=token, share_ids=share_ids)


def token_from_secret(secret: str) -> models.ApiToken:
    if not secret.startswith(TOKEN_PREFIX):
        raise BadToken("Send an API token as 'Authorization: Bearer li_…'.")
    now = timezone.now()
    token = (
        models.ApiToken.objects.select_related("user")
        .filter(digest=digest_of(secret), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        raise BadToken("Unknown or revoked API token.")
    if token.expires_at is not None and token.expires_at <= now:
        raise BadToken("This API token has expired.")
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
        models.ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def principal(request: HttpRequest) -> Principal:
    """The request's principal (cached on it). Raises BadToken."""
    found = getattr(request, "_principal", None)
    if found is None:
        found = principal_from(
            our_token(request.headers.get("Authorization"), request.headers.get(TOKEN_HEADER)),
            getattr(request, "user", AnonymousUser()),
            getattr(request, "session", None),
        )
        request._principal = found
    return found


class _Everywhere:
    """Every project (local mode): `id in price_project_ids` is always true."""

    def __contains__(self, project_id: object) -> bool:
        return True


def _price_project_ids(request: HttpRequest) -> Any:
    """The projects whose prices the caller may set (Access.MEMBER), asked only when a
    page shows an unknown cost: the link to the Prices form is offered only there."""
    if local_mode():
        return _Everywhere()
    try:
        who = principal(request)
    except BadToken:
        return frozenset()
    return frozenset(pk for pk in who.roles if who.allows(Access.MEMBER, pk))


def context(request: HttpRequest) -> dict[str, Any]:
    """Template context: the mode, so the top bar shows account links only when shared;
    where the caller may set prices (lazy: no query unless a page asks)."""
    return {
        "shared_mode": not local_mode(),
        "price_project_ids": SimpleLazyObject(lambda: _price_project_ids(request)),
    }


def ingest_project(request: HttpRequest, slug: str | None = None) -> models.Project | None:
    """Where an upload or live trace goes: the token's project, the named one the user may
    ingest into, or (local mode) the default project. None: nowhere allowed."""
    return ingest_project_of(principal(request), slug)


def ingest_project_of(who: Principal, slug: str | None = None) -> models.Project | None:
    if who.token is not None:
        return who.token.project
    if local_mode() and not slug:
        return models.Project.default()
    projects = who.projects(Access.INGEST)
    if slug:
        return projects.filter(slug=slug).first()
    return projects.order_by("pk").first()
