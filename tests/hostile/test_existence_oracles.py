"""No answer tells a caller whether a trace, set or project exists that they may not read.

Issue 26 found two oracles in shared mode: an anonymous caller got 401 for a trace that
exists and 404 for one that does not, and a logged-in outsider got 403 for another
project's trace and 404 for a made-up id. Walked here over every URL pattern that names a
trace, a set or a project, every method a pattern declares, for the callers who may not
read alpha's rows: the answer for the real row and for a made-up one must be the same
status, the same body (with the id swapped back) and the same access header.
"""

from __future__ import annotations

import uuid

import pytest
from django.db import transaction
from django.urls import get_resolver

from tests.web import test_permission_matrix as matrix
from tests.web.test_permission_matrix import endpoints, fill
from traces.access.rules import rules_of

world = matrix.world
"""The permission matrix's shared-mode world: two projects, every kind of caller."""

OUTSIDERS = ("anonymous", "outsider", "revoked_token")
"""Callers who may read nothing of project alpha (the outsider owns beta)."""


def _naming_routes():
    found = []
    for route, callback, _, name in endpoints():
        if not any(key in route for key in ("trace_id", "set_id", ":project>")):
            continue
        rules = rules_of(callback) or {}
        for method in sorted({"GET", "POST"} | {m for m in rules if m != "*"}):
            found.append((route, name, method))
    return found


def _answer(world, who: str, method: str, url: str):
    with transaction.atomic():
        response = world.clients[who].generic(
            method, url, b"", content_type="text/plain", **world.headers(who)
        )
        transaction.set_rollback(True)
    return response


@pytest.mark.parametrize(("route", "name", "method"), _naming_routes())
def test_a_hidden_row_answers_as_a_missing_one(world, route, name, method):
    url, scope = fill(route, world)
    real = {
        "trace": str(world.trace.pk),
        "set": str(world.run_set.pk),
        "project": world.alpha.slug,
    }[scope]
    made_up = str(uuid.uuid4()) if scope != "project" else "no-such-project"
    missing_url = url.replace(real, made_up)
    assert get_resolver().resolve(missing_url)
    for who in OUTSIDERS:
        hidden = _answer(world, who, method, url)
        if hidden.status_code == 405:
            continue
        missing = _answer(world, who, method, missing_url)
        assert hidden.status_code == missing.status_code, (who, method, url)
        assert hidden.status_code in (302, 401, 404), (who, method, url, hidden.status_code)
        assert hidden.content.replace(real.encode(), made_up.encode()) == missing.content
        assert hidden.get("Location", "").replace(real, made_up) == missing.get("Location", "")
        assert hidden.has_header("X-Access-Denied") == missing.has_header("X-Access-Denied")


def test_the_routes_walked_cover_traces_sets_and_projects():
    routes = {route for route, _, _ in _naming_routes()}
    assert any("trace_id" in r for r in routes)
    assert any("set_id" in r for r in routes)
    assert any(":project>" in r for r in routes)


def test_a_viewer_who_can_read_but_not_change_still_gets_403(world):
    """403 stays for what the caller can see: a viewer deleting alpha's trace."""
    response = world.clients["viewer"].post(f"/traces/{world.trace.pk}/delete")
    assert response.status_code == 403
