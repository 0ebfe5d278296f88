"""The permission matrix: every URL pattern and websocket route, every kind of principal.

The resolver is walked, so a new endpoint is in this test the moment it is routed; one
without an `@access` rule fails `test_every_endpoint_declares_a_rule`. Each declared rule
is then checked by real requests (shared mode) for anonymous, viewer, member, owner, a
user of another project, read / ingest / revoked tokens and a share link: allowed or
refused as the table below (written independently of traces.access.rules) says.
"""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.db import connections, transaction
from django.urls import URLPattern, URLResolver, get_resolver

from inspector.asgi import application
from tests.live.conftest import run_async
from tests.live.events import agent_lines, ndjson
from tests.web.team_world import PRINCIPALS, build_world
from traces.access.decisions import forget_decisions
from traces.access.rules import DELEGATED_NAMESPACES, Access, rules_of
from traces.capture import proxy, proxy_asgi
from traces.mcp_server.http import MCP_PATH, McpEndpoint
from traces.routing import websocket_urlpatterns
from traces.services.upload import trace_upload

USERS = {"viewer", "member", "owner", "outsider"}
ALPHA_VIEWERS = {"viewer", "member", "owner"}
ALPHA_MEMBERS = {"member", "owner"}

ALLOWED: dict[tuple[Access, str], set[str]] = {
    # (rule, what the URL names) -> who may
    (Access.PUBLIC, "none"): set(PRINCIPALS),
    (Access.PUBLIC, "trace"): set(PRINCIPALS),
    (Access.ACCOUNT, "none"): USERS,
    (Access.READ, "none"): USERS | {"read_token"},
    (Access.READ, "trace"): ALPHA_VIEWERS | {"read_token", "share_link"},
    (Access.READ, "set"): ALPHA_VIEWERS | {"read_token"},
    (Access.INGEST, "none"): ALPHA_MEMBERS | {"outsider", "ingest_token"},
    (Access.INGEST, "trace"): ALPHA_MEMBERS | {"ingest_token"},
    (Access.ORIGINAL, "trace"): ALPHA_MEMBERS | {"read_token"},
    (Access.MEMBER, "trace"): ALPHA_MEMBERS | {"ingest_token"},
    (Access.MEMBER, "project"): ALPHA_MEMBERS | {"ingest_token"},
    (Access.OWNER, "project"): {"owner"},
    (Access.LOCAL, "none"): set(),  # shared mode: nobody, not even an owner
}


EXPECTED_RULES = {
    "traces:list": Access.READ,
    "traces:upload": Access.INGEST,
    "traces:detail": Access.READ,
    "traces:download": Access.ORIGINAL,
    "traces:export-html": Access.READ,
    "traces:api-traces": Access.INGEST,
    "traces:api-live": Access.INGEST,
    "traces:api-jobs": Access.INGEST,
    "traces:api-trace": Access.READ,
    "traces:api-job": Access.INGEST,
    "live:lines": Access.INGEST,
    "live:close": Access.INGEST,
    "team:delete": Access.MEMBER,
    "team:share": Access.MEMBER,
    "team:share-revoke": Access.MEMBER,
    "team:shared": Access.PUBLIC,
    "team:project": Access.OWNER,
    "team:prices": Access.MEMBER,
    "team:tokens": Access.ACCOUNT,
    "accounts:login": Access.PUBLIC,
    "accounts:password": Access.ACCOUNT,
    "traces:labels": Access.MEMBER,
    "traces:notes": Access.MEMBER,
    "traces:note": Access.MEMBER,
    "traces:postmortem": Access.READ,
    "traces:export-md": Access.READ,
    "traces:what-if-json": Access.READ,
    "traces:figures-json": Access.READ,
    "traces:sets": Access.READ,
    "traces:usage": Access.READ,
    "traces:set": Access.READ,
    "traces:compare": Access.READ,
    "traces:compare-sets": Access.READ,
    "traces:api-sets": Access.READ,
    "traces:api-set": Access.READ,
    "capture:anthropic": Access.INGEST,
    "capture:session-openai": Access.INGEST,
    "capture:otlp": Access.INGEST,
    "capture:api-otlp": Access.INGEST,
    "capture:otlp-logs": Access.INGEST,
    "capture:api-otlp-logs": Access.INGEST,
    "capture:otlp-metrics": Access.INGEST,
    "capture:api-otlp-metrics": Access.INGEST,
    "capture:session-status": Access.READ,
    "capture:forwarded": Access.INGEST,
    "capture:session-page": Access.READ,
    "traces:machine": Access.LOCAL,
}
"""What the issue asks of these endpoints, so a wrong declaration fails too."""


def walk(resolver: URLResolver, prefix: str = "", namespace: str | None = None):
    """(route, callback, namespace, url name) of every pattern under the resolver."""
    for entry in resolver.url_patterns:
        if isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback, namespace, entry.name
        elif isinstance(entry, URLResolver):
            inner = entry.namespace or namespace
            yield from walk(entry, prefix + str(entry.pattern), inner)


def endpoints():
    return [e for e in walk(get_resolver()) if e[2] not in DELEGATED_NAMESPACES]


def test_every_endpoint_declares_a_rule():
    undeclared = [route for route, callback, _, _ in endpoints() if rules_of(callback) is None]
    assert not undeclared, f"declare @access(...) on: {undeclared}"
    assert len(endpoints()) >= 25
    for route in websocket_urlpatterns:
        assert rules_of(route.callback) is not None, f"declare @access on {route.pattern}"


def test_declared_rules_are_the_intended_ones():
    declared = {f"{namespace}:{name}": rules_of(cb)["*"] for _, cb, namespace, name in endpoints()}
    for name, rule in EXPECTED_RULES.items():
        assert declared[name] is rule, name
    assert (
        rules_of(get_resolver().resolve("/api/traces/" + str(uuid.uuid4())).func)["DELETE"]
        is Access.MEMBER
    )


def test_a_view_without_a_rule_is_caught():
    def bare(request):
        return None

    assert rules_of(bare) is None


def fill(route: str, world) -> tuple[str, str]:
    """A real URL for the route, and what it names (trace, project or nothing)."""
    values = {
        "trace_id": str(world.trace.pk),
        "index": "1",
        "number": "1",
        "rule_id": "repeated-tool-call",
        "project": world.alpha.slug,
        "token_id": str(world.token_ids["read_token"]),
        "link_id": str(world.share_id),
        "secret": world.share_secret,
        "set_id": str(world.run_set.pk),
    }
    url, scope = "/", "none"
    for part in route.replace(">", "<").split("<"):
        if ":" in part or part in values:
            name = part.split(":")[-1]
            url += values.get(name, "1" if part.startswith("int:") else str(uuid.uuid4()))
            if name == "trace_id":
                scope = "trace"
            elif name == "project":
                scope = "project"
            elif name == "set_id":
                scope = "set"
        else:
            url += part
    return url, scope


def expected(rule: Access, scope: str, who: str) -> bool:
    key = (rule, scope)
    if key not in ALLOWED and rule in (Access.PUBLIC, Access.ACCOUNT):
        key = (rule, "none")
    assert key in ALLOWED, f"no expectation for {key}: add one to ALLOWED"
    return who in ALLOWED[key]


@pytest.fixture
def world(db, settings):
    settings.INSPECTOR_AUTH = True
    # The recording proxy answers "no upstream configured" instead of calling out.
    settings.INSPECTOR_UPSTREAM_ANTHROPIC = ""
    settings.INSPECTOR_UPSTREAM_OPENAI = ""
    settings.INSPECTOR_UPSTREAM_GEMINI = ""
    settings.INSPECTOR_UPSTREAM_OPENROUTER = ""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_world()


def cases():
    found = []
    for route, callback, _, name in endpoints():
        rules = rules_of(callback) or {}
        methods = {"GET", "POST"} | {m for m in rules if m != "*"}
        found.extend((route, name, method) for method in sorted(methods))
    return found


@pytest.mark.parametrize(("route", "name", "method"), cases())
def test_matrix(world, route, name, method):
    url, scope = fill(route, world)
    callback = get_resolver().resolve(url).func
    rules = rules_of(callback)
    rule = rules.get(method, rules["*"])
    for who in PRINCIPALS:
        with transaction.atomic():
            response = world.clients[who].generic(
                method, url, b"", content_type="text/plain", **world.headers(who)
            )
            transaction.set_rollback(True)
        if response.status_code == 405:
            continue
        denied = (
            response.has_header("X-Access-Denied")
            or response.status_code in (401, 403)
            or getattr(response.wsgi_request, "access_denied", None) is not None
        )
        assert response.status_code < 500, (who, response.status_code)
        assert denied != expected(rule, scope, who), (
            f"{method} {url} ({rule.value}) for {who}: HTTP {response.status_code}"
        )


def test_the_admin_guards_itself(world):
    for who in ("anonymous", "viewer", "read_token"):
        response = world.clients[who].get("/admin/", **world.headers(who))
        assert response.status_code == 302 and "/admin/login/" in response["Location"]


def websocket_path(route, world) -> str:
    path = "/" + str(route.pattern)
    return path.replace("<uuid:trace_id>", str(world.trace.pk)).replace("<str:session>", "s1")


@pytest.mark.django_db(transaction=True)
def test_websocket_matrix(settings):
    """Every websocket route, for each kind of caller: refused (4403) exactly when its
    rule says so. The proxy's Responses sockets, whose upstream is not configured here,
    close with 4404 once allowed."""
    settings.INSPECTOR_AUTH = True
    settings.INSPECTOR_UPSTREAM_OPENAI = ""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    world = build_world()
    cookies = {
        who: client.cookies["sessionid"].value
        for who, client in world.clients.items()
        if "sessionid" in client.cookies
    }

    async def attempt(path: str, who: str) -> tuple[bool, int | None]:
        headers = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")]
        if who in cookies:
            headers.append((b"cookie", f"sessionid={cookies[who]}".encode()))
        for value in world.headers(who).values():
            headers.append((b"authorization", value.encode()))
        communicator = WebsocketCommunicator(application, path, headers=headers)
        try:
            connected, code = await communicator.connect(timeout=5)
        finally:
            await communicator.disconnect()
        return connected, code

    async def scenario():
        results = {}
        try:
            for route in websocket_urlpatterns:
                path = websocket_path(route, world)
                for who in PRINCIPALS:
                    results[(path, who)] = await attempt(path, who)
        finally:
            await database_sync_to_async(connections.close_all)()
        return results

    results = run_async(scenario)
    assert len(websocket_urlpatterns) == 4
    for route in websocket_urlpatterns:
        rule = rules_of(route.callback)["*"]
        path = websocket_path(route, world)
        scope = "trace" if "<uuid:trace_id>" in str(route.pattern) else "none"
        for who in PRINCIPALS:
            connected, code = results[(path, who)]
            denied = not connected and code == 4403
            assert denied != expected(rule, scope, who), (path, who, connected, code)
            if scope == "none" and not denied:
                assert code == 4404, (path, who, code)  # allowed: no upstream configured


def proxy_routes():
    """The recording proxy's relay routes: served by the ASGI fast path (traces.capture.proxy_asgi)
    when a request carries no cookie, so their rule is checked there too."""
    return [route for route, callback, _, _ in endpoints() if callback is proxy.relay]


@pytest.mark.django_db(transaction=True)
def test_proxy_fast_path_matrix(settings):
    """Each relay route through the ASGI application, as daphne serves it: the same
    allowed-or-refused table as the Django view (cookie holders go on to Django)."""
    settings.INSPECTOR_AUTH = True
    settings.INSPECTOR_UPSTREAM_ANTHROPIC = ""
    settings.INSPECTOR_UPSTREAM_OPENAI = ""
    settings.INSPECTOR_UPSTREAM_GEMINI = ""
    settings.INSPECTOR_UPSTREAM_OPENROUTER = ""
    settings.INSPECTOR_UPSTREAM_BEDROCK = ""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    world = build_world()
    routes = [fill(route, world) for route in proxy_routes()]
    # anthropic, openai, gemini, openrouter, bedrock; with and without a session
    assert len(routes) == 10
    cookies = {
        who: client.cookies["sessionid"].value
        for who, client in world.clients.items()
        if "sessionid" in client.cookies
    }

    def scope_headers(who: str) -> list[tuple[bytes, bytes]]:
        headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]
        if who in cookies:
            headers.append((b"cookie", f"sessionid={cookies[who]}".encode()))
        for value in world.headers(who).values():
            headers.append((b"authorization", value.encode()))
        return headers

    async def scenario():
        results = {}
        try:
            for url, _ in routes:
                for who in PRINCIPALS:
                    scope = {"type": "http", "path": url, "method": "POST", "headers": []}
                    scope["headers"] = scope_headers(who)
                    fast = proxy_asgi.plain_request({**scope, "client": ("127.0.0.1", 1)})
                    assert (fast is None) == (who in cookies), (url, who)
                    communicator = HttpCommunicator(
                        application, "POST", url, body=b"{}", headers=scope_headers(who)
                    )
                    results[(url, who)] = await communicator.get_response(timeout=10)
                    # Let the application finish (Django closes the response and gives
                    # its database connection back to the pool after sending it).
                    await communicator.wait(timeout=10)
        finally:
            forget_decisions()
            await database_sync_to_async(connections.close_all)()
        return results

    results = run_async(scenario)
    for url, scope in routes:
        for who in PRINCIPALS:
            response = results[(url, who)]
            headers = {k.decode().lower(): v for k, v in response["headers"]}
            denied = "x-access-denied" in headers or response["status"] in (401, 403)
            assert response["status"] < 500, (url, who, response["status"])
            assert denied != expected(Access.INGEST, scope, who), (url, who, response["status"])


TOKEN_PRINCIPALS = {"read_token", "ingest_token", "revoked_token"}
MCP_INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}'
)


@pytest.mark.django_db(transaction=True)
def test_mcp_endpoint_matrix(settings):
    """`/mcp` (traces.mcp_server.http, mounted before Django in the ASGI app) declares READ
    and answers it for API tokens only: a browser session (cookie, share link) is not read
    there, so the allowed are READ's token holders, and everyone else is refused with
    401/403 before the MCP server runs."""
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    world = build_world()
    assert rules_of(McpEndpoint) == {"*": Access.READ}
    cookies = {
        who: client.cookies["sessionid"].value
        for who, client in world.clients.items()
        if "sessionid" in client.cookies
    }

    def scope_headers(who: str) -> list[tuple[bytes, bytes]]:
        headers = [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
        ]
        if who in cookies:
            headers.append((b"cookie", f"sessionid={cookies[who]}".encode()))
        for value in world.headers(who).values():
            headers.append((b"authorization", value.encode()))
        return headers

    async def scenario():
        results = {}
        try:
            for who in PRINCIPALS:
                communicator = HttpCommunicator(
                    application, "POST", MCP_PATH, body=MCP_INITIALIZE, headers=scope_headers(who)
                )
                results[who] = await communicator.get_response(timeout=20)
                await communicator.wait(timeout=10)
        finally:
            forget_decisions()
            await database_sync_to_async(connections.close_all)()
        return results

    results = run_async(scenario)
    allowed = ALLOWED[(Access.READ, "none")] & TOKEN_PRINCIPALS
    assert allowed == {"read_token"}
    assert results["read_token"]["status"] == 200
    for who in PRINCIPALS:
        response = results[who]
        headers = {k.decode().lower(): v for k, v in response["headers"]}
        denied = "x-access-denied" in headers or response["status"] in (401, 403)
        assert response["status"] < 500, (who, response["status"])
        assert denied != (who in allowed), (who, response["status"], response["body"][:200])


def test_lists_show_only_the_users_projects(world):
    other = trace_upload(
        files=[("", ndjson(agent_lines(2)))], name="beta secret run", project=world.beta
    ).trace
    member_page = world.clients["member"].get("/").content.decode()
    assert world.trace.name in member_page and other.name not in member_page
    outsider_page = world.clients["outsider"].get("/").content.decode()
    assert other.name in outsider_page and world.trace.name not in outsider_page
    # Another project's trace answers exactly as a trace that does not exist.
    hidden = world.clients["outsider"].get(f"/traces/{world.trace.pk}/")
    missing = world.clients["outsider"].get(f"/traces/{uuid.uuid4()}/")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content and not hidden.has_header("X-Access-Denied")


def test_usage_adds_up_only_the_users_projects(world):
    other = trace_upload(
        files=[("", ndjson(agent_lines(2)))], name="beta secret run", project=world.beta
    ).trace
    for name, own in (("member", world.trace), ("viewer", world.trace), ("outsider", other)):
        page = world.clients[name].get("/usage/?tz=UTC")
        assert page.status_code == 200
        totals = page.context["summary"]["totals"]
        assert (totals["sessions"], totals["calls"]) == (1, own.calls_count), name
    assert world.clients["anonymous"].get("/usage/").status_code in (302, 401, 403, 404)


def test_sets_and_comparisons_show_only_the_users_projects(world):
    other = trace_upload(
        files=[("", ndjson(agent_lines(2)))], name="beta secret run", project=world.beta
    ).trace
    outsider, member = world.clients["outsider"], world.clients["member"]
    assert "alpha set" in member.get("/sets/").content.decode()
    assert "alpha set" not in outsider.get("/sets/").content.decode()
    assert "alpha set" not in outsider.get("/api/sets").content.decode()
    assert outsider.get(f"/sets/{world.run_set.pk}/").status_code == 404
    # Comparing a run one may read with one of another project answers as if it did not exist.
    assert outsider.get(f"/compare/{other.pk}/{world.trace.pk}/").status_code == 404
    assert member.get(f"/compare/{world.trace.pk}/{other.pk}/").status_code == 404
    assert member.get(f"/compare/{world.trace.pk}/{world.trace.pk}/").status_code == 200
    picked = member.get(f"/compare/?a={world.trace.pk}&b=beta+secret+run")
    assert picked.status_code == 404
