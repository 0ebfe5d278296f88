"""The proxy fast path's cached access decision: reused for a moment, renewed after the
response once it is a second old (a steady caller never waits for the lookup), and a
change elsewhere still seen within DECISION_SECONDS."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from django.db import connections
from django.utils import timezone

from inspector.asgi import application
from tests.live.conftest import run_async
from tests.web.team_world import build_world
from traces import models
from traces.access.decisions import (
    RENEW_AFTER,
    DecisionStore,
    IngestDecision,
    cached_decision,
    forget_decisions,
    generation,
    remember_decision,
)
from traces.access.rules import Access
from traces.capture.proxy_asgi import DecisionRenewals
from traces.stores import store

URL = "/proxy/s/decisions/anthropic/v1/messages"


def test_a_decision_is_renewed_after_a_second_and_dropped_after_two():
    key = (Access.INGEST, None, True)
    decision = IngestDecision(None)
    try:
        remember_decision(key, decision, 100.0, generation())
        assert cached_decision(key, 100.5) == (decision, False)
        assert cached_decision(key, 101.2) == (decision, True)
        assert cached_decision(key, 102.0) is None
    finally:
        forget_decisions()


def test_a_lookup_that_overlapped_a_change_is_not_kept():
    """Looked up, then a token changed before it was remembered: it may have read the
    state before the change, so the next request looks again."""
    key = (Access.INGEST, "digest", False)
    looked_up_in = generation()
    forget_decisions()  # what saving a token does
    remember_decision(key, IngestDecision(None), 100.0, looked_up_in)
    assert cached_decision(key, 100.1) is None


@pytest.mark.django_db(transaction=True)
def test_a_revocation_elsewhere_is_seen_by_the_renewal(settings):
    """A token revoked by another process (no signal here): the call that finds its
    decision over a second old is still let through, renews it after its response, and
    the next call is refused without waiting out the two seconds."""
    settings.INSPECTOR_AUTH = True
    settings.INSPECTOR_UPSTREAM_ANTHROPIC = ""  # allowed calls end in the vendor-shaped 404
    world = build_world()
    secret = world.secrets["ingest_token"]
    headers = [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"application/json"),
        (b"authorization", f"Bearer {secret}".encode()),
    ]

    async def call() -> int:
        communicator = HttpCommunicator(application, "POST", URL, body=b"{}", headers=headers)
        response = await communicator.get_response(timeout=10)
        await communicator.wait(timeout=10)
        return response["status"]

    def age_the_decision(seconds: float) -> None:
        decisions = store(DecisionStore)
        (key, decision, looked_up_at), *_ = decisions.entries()
        decisions.remember(key, decision, looked_up_at - seconds, decisions.generation)

    async def scenario() -> list[int]:
        statuses = [await call()]  # looked up: allowed
        await database_sync_to_async(
            models.ApiToken.objects.filter(pk=world.token_ids["ingest_token"]).update
        )(revoked_at=timezone.now())
        statuses.append(await call())  # still the cached decision
        age_the_decision(RENEW_AFTER + 0.1)
        statuses.append(await call())  # cached, due: renewed after the response
        # The renewal runs after the response: wait for it to finish (its task is done
        # once the fresh decision is cached), not for a guessed time.
        await asyncio.wait_for(asyncio.gather(*store(DecisionRenewals).tasks()), 10)
        statuses.append(await call())  # the renewed decision: revoked
        return statuses

    try:
        statuses = run_async(scenario)
    finally:
        forget_decisions()
        connections.close_all()
    assert statuses == [404, 404, 404, 401]
