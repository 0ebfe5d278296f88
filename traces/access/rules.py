"""Who may do what: one declaration per endpoint, `@access(Access.READ)`, recorded and enforced.

Every view and websocket consumer says its rule with this decorator; the permission-matrix
test (tests/web/test_permission_matrix.py) walks every URL pattern and websocket route and
fails for any endpoint without one. Declaring a new endpoint is one line:

    @access(Access.READ)                                # a view or a consumer class
    @access(Access.READ, DELETE=Access.MEMBER)          # a rule per HTTP method

Rules (shared mode; local mode on loopback allows everything, see `local_mode`):
  PUBLIC   anyone (documentation, the login page, a share link's own URL)
  ACCOUNT  any logged-in user (their tokens, password, projects)
  READ     see traces: viewer or above, a `read` token, or a share link to that trace
  INGEST   create, append to, close traces: member or above, or an `ingest` token
  ORIGINAL download an original: member or above, a `read` token of a member, or a share
           link that allows it
  MEMBER   change a trace (delete, share): member or above, or an `ingest` token
  OWNER    a project's settings, members and audit log: owner only

An endpoint with a `trace_id` URL argument is checked against that trace's project, one
with `project` against that project; otherwise the user needs the rule in some project
and the view shows only what `principal.traces()` / `principal.projects(rule)` return.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property, wraps
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from traces import models
from traces.access.cross_site import local_mode

ROLE_RANK = {"viewer": 1, "member": 2, "owner": 3}
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


ROLE_NEEDED = {
    Access.READ: "viewer",
    Access.INGEST: "member",
    Access.ORIGINAL: "member",
    Access.MEMBER: "member",
    Access.OWNER: "owner",
}
TOKEN_SCOPE = {
    Access.READ: "read",
    Access.INGEST: "ingest",
    Access.ORIGINAL: "read",
    Access.MEMBER: "ingest",
}
"""The scope a token needs per rule (besides its user's role); OWNER needs a session."""

DELEGATED_NAMESPACES = {"admin": "the Django admin checks staff status itself"}
"""URL namespaces whose views guard themselves; the matrix test checks them as such."""


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


def context(request: HttpRequest) -> dict[str, Any]:
    """Template context: the mode, so the top bar shows account links only when shared."""
    return {"shared_mode": not local_mode()}


# -- the decorator ------------------------------------------------------------------------------
def access(rule: Access, *, uploads: bool = False, **by_method: Access):
    """Declare and enforce who may use a view (or a websocket consumer class).

    `uploads=True`: each POST through a token counts against its uploads per minute.
    """
    rules = {"*": rule, **{method.upper(): r for method, r in by_method.items()}}

    def decorate(target):
        if isinstance(target, type):
            return _guard_consumer(target, rules)

        def denial(request: HttpRequest, kwargs: dict[str, Any]) -> HttpResponse | None:
            wanted = rules.get(request.method, rules["*"])
            return check(request, wanted, kwargs) or _over_limit(request, wanted, uploads)

        if iscoroutinefunction(target):
            # An async view (uploads parse off the event loop): the check reads the
            # database, so it runs in Django's thread like any sync code.
            @wraps(target)
            async def guarded_async(request: HttpRequest, *args: Any, **kwargs: Any):
                refused = await sync_to_async(denial)(request, kwargs)
                if refused is not None:
                    return refused
                return await target(request, *args, **kwargs)

            guarded_async.access_rules = rules  # type: ignore[attr-defined]
            return guarded_async

        @wraps(target)
        def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            refused = denial(request, kwargs)
            if refused is not None:
                return refused
            return target(request, *args, **kwargs)

        guarded.access_rules = rules
        return guarded

    return decorate


def rules_of(callback: Any) -> dict[str, Access] | None:
    """The rules declared on a view or consumer (None: undeclared)."""
    for candidate in (callback, getattr(callback, "view_class", None)):
        found = getattr(candidate, "access_rules", None)
        if found is not None:
            return found
    consumer = getattr(callback, "consumer_class", None)
    return getattr(consumer, "access_rules", None)


def check(request: HttpRequest, rule: Access, kwargs: dict[str, Any]) -> HttpResponse | None:
    """None when allowed; else the refusal (login redirect, 401 or 403)."""
    if rule is Access.PUBLIC:
        return None
    try:
        who = principal(request)
    except BadToken as exc:
        return _refuse(request, rule, 401, str(exc))
    project_id = None
    trace_id = kwargs.get("trace_id")
    if trace_id is not None:
        project_id = (
            models.Trace.objects.filter(pk=trace_id).values_list("project_id", flat=True).first()
        )
        if project_id is None:
            return None  # no such trace: the view answers 404 itself
        allowed = who.allows_trace(rule, trace_id, project_id)
    elif kwargs.get("set_id") is not None:
        project_id = (
            models.RunSet.objects.filter(pk=kwargs["set_id"])
            .values_list("project_id", flat=True)
            .first()
        )
        if project_id is None:
            return None  # no such set: the view answers 404 itself
        allowed = who.allows(rule, project_id)
    else:
        if kwargs.get("project") is not None:
            project_id = (
                models.Project.objects.filter(slug=kwargs["project"])
                .values_list("pk", flat=True)
                .first()
            )
            if project_id is None:
                return None
        allowed = who.allows(rule, project_id)
    if allowed:
        return None
    if not who.authenticated and who.token is None:
        return _refuse(request, rule, 401, "Log in, or send an API token.")
    return _refuse(request, rule, 403, "You do not have access to this.")


def _over_limit(request: HttpRequest, rule: Access, uploads: bool) -> HttpResponse | None:
    """429 with Retry-After when a token's write passes its limits (traces.access.rate_limit)."""
    from traces.access.rate_limit import charge

    if rule not in (Access.INGEST, Access.MEMBER) or request.method in ("GET", "HEAD"):
        return None
    token = getattr(request, "_principal", None) and request._principal.token
    if token is None:
        return None
    try:
        nbytes = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        nbytes = 0
    wait = charge(token.pk, uploads=1 if uploads else 0, nbytes=nbytes)
    if not wait:
        return None
    response = JsonResponse(
        {"error": f"Rate limit of this API token reached: retry in {wait} s.", "retry_after": wait},
        status=429,
    )
    response["Retry-After"] = str(wait)
    return response


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/") or "text/html" not in request.headers.get("Accept", "")


def _refuse(request: HttpRequest, rule: Access, status: int, message: str) -> HttpResponse:
    if _wants_json(request):
        response: HttpResponse = JsonResponse({"error": message}, status=status)
        if status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="loop-inspector"'
    elif status == 401 and request.method == "GET":
        login = reverse(settings.LOGIN_URL)
        response = HttpResponse(status=302)
        response["Location"] = f"{login}?{urlencode({'next': request.get_full_path()})}"
    else:
        response = render(request, "accounts/denied.html", {"message": message}, status=status)
    response["X-Access-Denied"] = rule.value
    return response


# -- websockets ---------------------------------------------------------------------------------
def _guard_consumer(consumer: type, rules: dict[str, Access]) -> type:
    """Check the rule on connect (before accept: a refusal is a 403 handshake)."""
    from channels.db import database_sync_to_async

    original = consumer.connect

    async def connect(self) -> None:
        allowed = await database_sync_to_async(scope_allows)(self.scope, rules["*"])
        if not allowed:
            await self.close(code=4403)
            return
        await original(self)

    consumer.connect = connect
    consumer.access_rules = rules
    return consumer


def scope_allows(scope: dict[str, Any], rule: Access) -> bool:
    """The rule for a websocket scope (session user, bearer token, share links)."""
    if rule is Access.PUBLIC:
        return True
    headers = dict(scope.get("headers", []))
    secret = our_token(
        headers.get(b"authorization", b"").decode("latin-1"),
        headers.get(TOKEN_HEADER.lower().encode(), b"").decode("latin-1") or None,
    )
    try:
        who = principal_from(secret, scope.get("user"), scope.get("session"))
    except BadToken:
        return False
    scope["principal"] = who
    trace_id = scope.get("url_route", {}).get("kwargs", {}).get("trace_id")
    if trace_id is None:
        return who.allows(rule, None)
    project_id = (
        models.Trace.objects.filter(pk=trace_id).values_list("project_id", flat=True).first()
    )
    if project_id is None:
        return True  # the consumer closes with its own "not found"
    return who.allows_trace(rule, trace_id, project_id)


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


def rate_limited(token_id: int | None, rule: Access, method: str, nbytes: int) -> int:
    """Seconds to wait when this write passes its token's limits (access.rate_limit), else 0."""
    from traces.access.rate_limit import charge

    if token_id is None or rule not in (Access.INGEST, Access.MEMBER):
        return 0
    if method in ("GET", "HEAD"):
        return 0
    return charge(token_id, uploads=0, nbytes=nbytes)
