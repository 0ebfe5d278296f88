"""Per-token limits: uploads per minute and bytes per day answer 429 with Retry-After."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from django.core.cache import cache
from django.db import connections
from django.test import Client

from inspector.asgi import application
from tests.live.conftest import run_async
from tests.live.events import agent_lines, ndjson
from tests.web.team_world import build_world
from traces import models
from traces.access.rate_limit import charge
from traces.conf import inspector_settings

BODY = ndjson(agent_lines(2))


@pytest.fixture
def limited(db, settings):
    def configure(**limits):
        settings.INSPECTOR = limits
        inspector_settings.cache_clear()

    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    yield configure
    inspector_settings.cache_clear()
    cache.clear()


def upload(world, who="ingest_token"):
    return Client().post(
        "/api/traces", BODY, content_type="application/x-ndjson", **world.headers(who)
    )


def test_uploads_per_minute(limited):
    limited(TOKEN_UPLOADS_PER_MINUTE=2, TOKEN_BYTES_PER_DAY=0)
    world = build_world()
    assert [upload(world).status_code for _ in range(2)] == [201, 201]
    refused = upload(world)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json()["retry_after"] == int(refused["Retry-After"])
    assert models.Trace.objects.count() == 3  # the world's trace and two uploads
    # Other callers are not affected: a logged-in member, and the token's reads.
    member = world.clients["member"].post("/api/traces", BODY, content_type="text/plain")
    assert member.status_code == 201


def test_bytes_per_day(limited):
    limited(TOKEN_UPLOADS_PER_MINUTE=0, TOKEN_BYTES_PER_DAY=len(BODY) + 10)
    world = build_world()
    assert upload(world).status_code == 201
    refused = upload(world)
    assert refused.status_code == 429
    assert 60 < int(refused["Retry-After"]) <= 86400
    assert "Rate limit" in refused.json()["error"]


def test_windows_reset():
    cache.clear()
    inspector_settings.cache_clear()
    start = 1_800_000_000.0  # on a minute boundary
    assert charge(7, uploads=60, now=start) == 0
    assert charge(7, uploads=1, now=start + 10) == 50
    assert charge(7, uploads=1, now=start + 61) == 0
    cache.clear()


@pytest.mark.django_db(transaction=True)
def test_bytes_per_day_count_bodies_without_a_content_length(limited):
    """Issue 26: a chunked body (no Content-Length) was not counted: free bytes."""
    limited(TOKEN_UPLOADS_PER_MINUTE=0, TOKEN_BYTES_PER_DAY=len(BODY) + 10)
    world = build_world()
    token = world.headers("ingest_token")["HTTP_AUTHORIZATION"]

    async def chunked_upload() -> int:
        headers = [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/x-ndjson"),
            (b"transfer-encoding", b"chunked"),
            (b"authorization", token.encode()),
        ]
        communicator = HttpCommunicator(application, "POST", "/api/traces", BODY, headers)
        response = await communicator.get_response(timeout=30)
        await database_sync_to_async(connections.close_all)()
        return response["status"]

    assert run_async(chunked_upload) == 201
    assert run_async(chunked_upload) == 429


def otlp_export(*trace_ids: str) -> bytes:
    import json

    spans = [
        {
            "traceId": trace_id,
            "spanId": f"{n:016x}",
            "name": "chat",
            "startTimeUnixNano": "1700000000000000000",
            "endTimeUnixNano": "1700000001000000000",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
        }
        for n, trace_id in enumerate(trace_ids, start=1)
    ]
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).encode()


@pytest.mark.django_db(transaction=True)
def test_otlp_counts_the_traces_it_creates_not_its_exports(limited):
    """Issue 26: each export counted as one upload, whatever it created."""
    limited(TOKEN_UPLOADS_PER_MINUTE=3, TOKEN_BYTES_PER_DAY=0)
    world = build_world()
    headers = world.headers("ingest_token")

    def export(*trace_ids: str):
        return Client().post("/v1/traces", otlp_export(*trace_ids), "application/json", **headers)

    one = "ab" * 16
    for _ in range(5):  # a per-span exporter: five exports, one trace
        assert export(one).status_code == 200
    many = [f"{n:032x}" for n in range(1, 6)]
    refused = export(*many)  # five new traces: over the three a minute
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert export(*many[:2]).status_code == 200  # two more fit: 1 + 2 = 3
    assert models.Trace.objects.filter(capture_key__contains="otlp:").count() == 3
