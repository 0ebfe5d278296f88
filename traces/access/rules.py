"""Who may do what: one declaration per endpoint, `@access(Access.READ)`, recorded and enforced.

Every view and websocket consumer says its rule with this decorator; the permission-matrix
test (tests/web/test_permission_matrix.py) walks every URL pattern and websocket route and
fails for any endpoint without one. Declaring a new endpoint is one line:

    @access(Access.READ)                                # a view or a consumer class
    @access(Access.READ, DELETE=Access.MEMBER)          # a rule per HTTP method

Who is asking (the principal, its tokens and roles) is resolved in `traces.access.principals`;
the names views use from there are re-exported here, so a view needs this one import.

Rules (shared mode; local mode on loopback allows everything, see `local_mode`):
  PUBLIC   anyone (documentation, the login page, a share link's own URL)
  ACCOUNT  any logged-in user (their tokens, password, projects)
  READ     see traces: viewer or above, a `read` token, or a share link to that trace
  INGEST   create, append to, close traces: member or above, or an `ingest` token
  ORIGINAL download an original: member or above, a `read` token of a member, or a share
           link that allows it
  MEMBER   change a trace (delete, share): member or above, or an `ingest` token
  OWNER    a project's settings, members and audit log: owner only
  LOCAL    this machine only (its agents' session stores): local mode and a loopback
           client; in shared mode, or from another address, the 404 of a missing page

An endpoint with a `trace_id` URL argument is checked against that trace's project, one
with `project` against that project; otherwise the user needs the rule in some project
and the view shows only what `principal.traces()` / `principal.projects(rule)` return.
"""

from __future__ import annotations

import time
from functools import wraps
from types import MappingProxyType
from typing import Any
from urllib.parse import urlencode

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse

from traces import models
from traces.access.cross_site import is_loopback, local_mode
from traces.access.principals import (
    ROLE_RANK,
    SHARES_SESSION_KEY,
    TOKEN_HEADER,
    TOKEN_PREFIX,
    Access,
    BadToken,
    Principal,
    context,
    digest_of,
    ingest_project,
    ingest_project_of,
    our_token,
    principal,
    principal_from,
)

__all__ = (
    "DELEGATED_NAMESPACES",
    "ROLE_RANK",
    "SHARES_SESSION_KEY",
    "TOKEN_HEADER",
    "TOKEN_PREFIX",
    "Access",
    "BadToken",
    "Principal",
    "access",
    "check",
    "context",
    "digest_of",
    "ingest_project",
    "ingest_project_of",
    "local_mode",
    "our_token",
    "principal",
    "rate_limited",
    "rules_of",
    "scope_allows",
)

DELEGATED_NAMESPACES = MappingProxyType({"admin": "the Django admin checks staff status itself"})
"""URL namespaces whose views guard themselves; the matrix test checks them as such."""


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
    """None when allowed; else the refusal (login redirect, 401, 403 or 404).

    No answer tells whether a row exists to someone who may not read it (issue 26: the
    401-vs-404 and 403-vs-404 oracles): a caller who is not logged in gets the same 401
    for a trace that exists and one that does not; a logged-in caller (or a token) who may
    not read the trace, set or project gets the very 404 a missing one gets. A 403 is left
    only for what the caller can see but not change.
    """
    if rule is Access.PUBLIC:
        return None
    if rule is Access.LOCAL:
        # Not even a login opens it: a shared server must never show, or import, the files
        # of the machine it runs on. Another address is refused by `CrossSiteGuard` in
        # local mode already; this holds if that middleware is ever left out.
        if local_mode() and is_loopback(request.META.get("REMOTE_ADDR")):
            return None
        return _not_found(request, "page")
    try:
        who = principal(request)
    except BadToken as exc:
        return _refuse(request, rule, 401, str(exc))
    anonymous = not who.authenticated and who.token is None
    target = _target(kwargs)
    if target is not None:
        what, rows, column = target
        project_id = _project_id(rows, column)
        if project_id is None:
            if anonymous and not local_mode():
                return _refuse(request, rule, 401, "Log in, or send an API token.")
            return _not_found(request, what)
        trace_id = kwargs.get("trace_id")
        if trace_id is not None:
            allowed = who.allows_trace(rule, trace_id, project_id)
            readable = allowed or who.allows_trace(Access.READ, trace_id, project_id)
        else:
            allowed = who.allows(rule, project_id)
            readable = allowed or who.allows(Access.READ, project_id)
    else:  # the URL names no row: nothing to hide
        allowed, readable = who.allows(rule, None), True
    if allowed:
        return None
    if anonymous:
        return _refuse(request, rule, 401, "Log in, or send an API token.")
    if not readable and target is not None:
        return _not_found(request, target[0])
    if who.authenticated and who.token is None and not who.roles and not _wants_json(request):
        # Issue 24: a first login (a superuser made by createsuperuser included) is in no
        # project yet; say how to make one instead of a bare "No access".
        response = render(request, "accounts/first_project.html", status=403)
        response["X-Access-Denied"] = rule.value
        return response
    return _refuse(request, rule, 403, "You do not have access to this.")


def _target(kwargs: dict[str, Any]) -> tuple[str, QuerySet, str] | None:
    """What a URL names (a trace, a set or a project): its kind and its row's project."""
    if kwargs.get("trace_id") is not None:
        return "trace", models.Trace.objects.filter(pk=kwargs["trace_id"]), "project_id"
    if kwargs.get("set_id") is not None:
        return "run set", models.RunSet.objects.filter(pk=kwargs["set_id"]), "project_id"
    if kwargs.get("project") is not None:
        return "project", models.Project.objects.filter(slug=kwargs["project"]), "pk"
    return None


def _not_found(request: HttpRequest, what: str) -> HttpResponse:
    """The one answer for a row that is missing or hidden, so the two cannot be told apart:
    no X-Access-Denied header; the denial is kept on the request for the access tests."""
    request.access_denied = "not found"  # type: ignore[attr-defined]
    if _wants_json(request):
        return JsonResponse({"error": f"No such {what}."}, status=404)
    raise Http404(f"No such {what}")


def _project_id(rows: QuerySet, column: str = "project_id") -> int | None:
    """The project of the row a URL names (one column, one query); None: no such row."""
    return rows.values_list(column, flat=True).first()


def _over_limit(request: HttpRequest, rule: Access, uploads: bool) -> HttpResponse | None:
    """429 with Retry-After when a token's write passes its limits (see `rate_limited`)."""
    token = getattr(request, "_principal", None) and request._principal.token
    nbytes = body_bytes(request) if token is not None else 0
    token_id = token.pk if token is not None else None
    wait = rate_limited(token_id, rule, request.method or "", nbytes, uploads=int(uploads))
    if not wait:
        return None
    response = JsonResponse(
        {"error": f"Rate limit of this API token reached: retry in {wait} s.", "retry_after": wait},
        status=429,
    )
    response["Retry-After"] = str(wait)
    return response


def body_bytes(request: HttpRequest) -> int:
    """The bytes of a request's body as read, whatever its headers say: a chunked body
    declares no Content-Length (issue 26: chunked uploads and live lines were not counted
    against a token's daily bytes). Under ASGI the body is a file already received whole,
    measured without reading it; else the declared length."""
    stream = getattr(request, "_stream", None)
    try:
        if stream is not None and stream.seekable():
            position = stream.tell()
            size = stream.seek(0, 2)
            stream.seek(position)
            return int(size)
    except (OSError, AttributeError, ValueError):
        pass
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


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
REVOKED = 4403
"""The close code of a socket whose grant is gone (revoked token or share link, lost
membership), as of a refused handshake."""


def _guard_consumer(consumer: type, rules: dict[str, Access]) -> type:
    """Check the rule on connect (before accept: a refusal is a 403 handshake), and give
    the consumer `still_allowed()`: the same check again, at most every DECISION_SECONDS,
    which consumers call before each event they send and each frame they take, so a
    revocation reaches open sockets too (issue 26: a socket opened through a share link
    kept receiving events after the link was revoked)."""
    from traces.access.decisions import DECISION_SECONDS
    from traces.storage.pool_reads import pool_read

    original = consumer.connect
    # Read-only (a token's last use aside): on the event loop's thread pool, so a
    # handshake never waits behind the sync thread every socket of the process shares.
    allows = pool_read(scope_allows)

    async def connect(self) -> None:
        allowed = await allows(self.scope, rules["*"])
        if not allowed:
            await self.close(code=REVOKED)
            return
        self.access_checked_at = time.monotonic()
        await original(self)

    async def still_allowed(self) -> bool:
        """Whether the grant still holds; when it does not, the socket is closed."""
        if local_mode() or rules["*"] is Access.PUBLIC:
            return True
        now = time.monotonic()
        if now - getattr(self, "access_checked_at", 0.0) < DECISION_SECONDS:
            return True
        allowed = await allows(self.scope, rules["*"])
        if allowed:
            self.access_checked_at = now
            return True
        await self.close(code=REVOKED, reason="access revoked")
        return False

    consumer.connect = connect
    consumer.still_allowed = still_allowed
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
    project_id = _project_id(models.Trace.objects.filter(pk=trace_id))
    if project_id is None:
        return True  # the consumer closes with its own "not found"
    return who.allows_trace(rule, trace_id, project_id)


def rate_limited(
    token_id: int | None, rule: Access, method: str, nbytes: int, *, uploads: int = 0
) -> int:
    """Seconds to wait when this write passes its token's limits (access.rate_limit), else 0.
    Only a token's writes count: reads, and requests without a token, are never limited."""
    from traces.access.rate_limit import charge

    if token_id is None or rule not in (Access.INGEST, Access.MEMBER):
        return 0
    if method in ("GET", "HEAD"):
        return 0
    return charge(token_id, uploads=uploads, nbytes=nbytes)
