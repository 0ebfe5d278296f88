"""The cross-site guard and the websocket origin rule, request by request (local mode)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.live.events import agent_lines, ndjson
from traces.access.cross_site import websocket_origin_ok

BODY = ndjson(agent_lines(2))


def post(**headers):
    return Client().post(
        "/api/traces", BODY, content_type="application/x-ndjson", HTTP_HOST="127.0.0.1:8000",
        **headers,
    )  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 201),  # curl, SDKs, agents
        ({"HTTP_SEC_FETCH_SITE": "same-origin"}, 201),
        ({"HTTP_SEC_FETCH_SITE": "none"}, 201),  # typed into the address bar
        ({"HTTP_ORIGIN": "http://127.0.0.1:8000"}, 201),
        ({"HTTP_SEC_FETCH_SITE": "cross-site"}, 403),
        ({"HTTP_SEC_FETCH_SITE": "same-site"}, 403),  # another port of the same host
        ({"HTTP_ORIGIN": "http://127.0.0.1:8001"}, 403),
        ({"HTTP_ORIGIN": "https://127.0.0.1:8000"}, 403),
        ({"HTTP_ORIGIN": "null"}, 403),  # sandboxed frames, data: pages
        ({"HTTP_ORIGIN": "http://evil.example", "HTTP_SEC_FETCH_SITE": "same-origin"}, 403),
    ],
)
def test_state_changing_requests_from_another_site_are_refused(headers, status):
    response = post(**headers)
    assert response.status_code == status, response.content
    if status == 403:
        assert response["X-Access-Denied"] == "cross-site"
        assert "Refused" in response.json()["error"]


@pytest.mark.django_db
def test_reads_from_another_site_still_work_for_links():
    """A GET is not state-changing: links from elsewhere (a chat, a ticket) open pages."""
    response = Client().get("/", HTTP_SEC_FETCH_SITE="cross-site", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("host", "origin", "ok"),
    [
        (b"127.0.0.1:8000", None, True),  # an agent: no Origin
        (b"127.0.0.1:8000", b"http://127.0.0.1:8000", True),
        (b"localhost:8000", b"http://localhost:8000", True),
        (b"127.0.0.1:8000", b"http://127.0.0.1:8001", False),  # same host, another port
        (b"localhost:8000", b"http://localhost:3000", False),
        (b"127.0.0.1:8000", b"http://localhost:8000", False),
        (b"evil.example:8000", b"http://evil.example:8000", False),  # not an allowed host
        (b"127.0.0.1:8000", b"null", False),
        (None, b"http://127.0.0.1:8000", False),
    ],
)
def test_websocket_origin_must_be_this_host_and_port(host, origin, ok):
    headers = {}
    if host is not None:
        headers[b"host"] = host
    if origin is not None:
        headers[b"origin"] = origin
    assert websocket_origin_ok(headers) is ok


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("address", "status"),
    [("127.0.0.1", 200), ("::1", 200), ("::ffff:127.0.0.1", 200), ("192.168.1.20", 403)],
)
def test_local_mode_answers_this_machine_only(address, status):
    response = Client(REMOTE_ADDR=address).get("/", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == status
    if status == 403:
        assert "local mode" in response.json()["error"]


@pytest.mark.django_db
def test_shared_mode_serves_other_machines(settings):
    settings.INSPECTOR_AUTH = True
    response = Client(REMOTE_ADDR="192.168.1.20").get("/accounts/login/", HTTP_HOST="127.0.0.1")
    assert response.status_code == 200
