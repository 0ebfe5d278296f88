"""Revoking a grant reaches the sockets it opened (issue 26): a viewer opened through a
share link stops receiving events, and an agent's ingest socket stops appending, once
the link or token is revoked; both close with 4403. The grant is checked again at most
every DECISION_SECONDS, so the tests wait that long: the rule is about elapsed time."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.db import connections
from django.utils import timezone

from inspector.asgi import application
from tests.live.conftest import run_async
from tests.web.team_world import build_world
from traces import live, models
from traces.access.decisions import DECISION_SECONDS
from traces.live.broadcast import MESSAGE_TYPE, group_name

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_world()


def headers_of(world, who: str) -> list[tuple[bytes, bytes]]:
    headers = [(b"host", b"127.0.0.1"), (b"origin", b"http://127.0.0.1")]
    client = world.clients[who]
    if "sessionid" in client.cookies:
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    for value in world.headers(who).values():
        headers.append((b"authorization", value.encode()))
    return headers


async def drain(communicator: WebsocketCommunicator) -> None:
    while not await communicator.receive_nothing(timeout=0.3):
        await communicator.receive_output(timeout=1)


def test_a_viewer_opened_by_a_share_link_is_closed_once_the_link_is_revoked(world):
    trace_id = world.trace.pk

    async def event(seq: int) -> None:
        await get_channel_layer().group_send(
            group_name(trace_id),
            {"type": MESSAGE_TYPE, "first": seq, "last": seq, "text": f'{{"seq": {seq}}}'},
        )

    async def scenario():
        path = f"/ws/traces/{trace_id}/"
        communicator = WebsocketCommunicator(application, path, headers_of(world, "share_link"))
        try:
            connected, _ = await communicator.connect(timeout=5)
            assert connected
            await drain(communicator)
            first = 10_000
            time.sleep(DECISION_SECONDS)  # the grant is due a check again
            await event(first)
            assert await communicator.receive_from(timeout=5) == f'{{"seq": {first}}}'
            await database_sync_to_async(models.ShareLink.objects.filter(pk=world.share_id).update)(
                revoked_at=timezone.now()
            )
            time.sleep(DECISION_SECONDS)
            await event(first + 1)
            closed = await communicator.receive_output(timeout=5)
            assert closed == {"type": "websocket.close", "code": 4403, "reason": "access revoked"}
        finally:
            await communicator.disconnect()
            await database_sync_to_async(connections.close_all)()

    run_async(scenario)


def test_an_ingest_socket_stops_appending_once_its_token_is_revoked(world):
    trace = live.create_live_trace(name="agent", project=world.alpha)

    async def scenario():
        path = f"/ws/ingest/{trace.pk}/"
        communicator = WebsocketCommunicator(application, path, headers_of(world, "ingest_token"))
        try:
            connected, _ = await communicator.connect(timeout=5)
            assert connected
            await database_sync_to_async(
                models.ApiToken.objects.filter(pk=world.token_ids["ingest_token"]).update
            )(revoked_at=timezone.now())
            time.sleep(DECISION_SECONDS)
            await communicator.send_json_to({"offset": 0, "lines": ['{"a": 1}']})
            closed = await communicator.receive_output(timeout=5)
            assert closed == {"type": "websocket.close", "code": 4403, "reason": "access revoked"}
        finally:
            await communicator.disconnect()
            await database_sync_to_async(connections.close_all)()

    run_async(scenario)
    assert models.Trace.objects.get(pk=trace.pk).lines_total == 0


def test_a_revoked_viewer_gets_nothing_by_asking_either(world):
    """A ping or resume reads stored events: it is checked like a broadcast."""
    trace_id = world.trace.pk

    async def scenario():
        path = f"/ws/traces/{trace_id}/"
        communicator = WebsocketCommunicator(application, path, headers_of(world, "share_link"))
        try:
            connected, _ = await communicator.connect(timeout=5)
            assert connected
            await drain(communicator)
            time.sleep(DECISION_SECONDS)
            await communicator.send_json_to({"type": "ping"})
            assert (await communicator.receive_json_from(timeout=5))["type"] == "pong"
            await database_sync_to_async(models.ShareLink.objects.filter(pk=world.share_id).update)(
                revoked_at=timezone.now()
            )
            time.sleep(DECISION_SECONDS)
            await communicator.send_json_to({"type": "resume", "after": 0})
            closed = await communicator.receive_output(timeout=5)
            assert closed == {"type": "websocket.close", "code": 4403, "reason": "access revoked"}
        finally:
            await communicator.disconnect()
            await database_sync_to_async(connections.close_all)()

    run_async(scenario)
