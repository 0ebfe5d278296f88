"""`/mcp` over streamable HTTP: a real daphne serving the ASGI app on a free port, driven
by the official SDK's client (`streamable_http_client` + `ClientSession`).

Shared mode: no token, a revoked one or one without read scope is refused before the MCP
server runs (401/403 with a JSON-RPC error body, the SDK client raising); a read token
gets every tool, its own project only, a hidden trace answering as a missing one, and no
credential in any answer. Local mode: the loopback caller gets every tool without a token.
"""

from __future__ import annotations

import uuid

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.live.servers import daphne
from tests.web.mcp_world import build_mcp_world, check_every_tool, http_session, process_env

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def world(transactional_db, settings, corpus):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_mcp_world(corpus)


def test_shared_mode_over_http(world, tmp_path):
    env = process_env(tmp_path, shared=True)
    secrets = world.team.secrets
    hidden, missing = str(world.hidden.pk), str(uuid.uuid4())
    with daphne(env, tmp_path / "daphne.log") as base:
        url = f"{base}/mcp"
        # Refused before the MCP server runs: status, JSON-RPC error, the header to send.
        raw = {
            who: httpx.post(url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)
            for who, headers in (
                ("none", {}),
                ("revoked", {"Authorization": f"Bearer {secrets['revoked_token']}"}),
                ("ingest", {"X-Loop-Inspector-Token": secrets["ingest_token"]}),
                ("not ours", {"Authorization": "Bearer sk-somebody-elses"}),
                ("read", {"Authorization": f"Bearer {world.read_token}"}),
            )
        }

        async def scenario():
            refused = []
            for headers in ({}, {"Authorization": f"Bearer {secrets['revoked_token']}"}):
                with pytest.raises(Exception) as caught:  # the SDK client raises its own kinds
                    async with http_session(url, headers):
                        pass
                refused.append(caught.value)
            bearer = {"Authorization": f"Bearer {world.read_token}"}
            async with http_session(url, bearer) as session:
                said = await check_every_tool(session, world)
                answers = []
                for trace_id in (hidden, missing):
                    with pytest.raises(MCPError) as caught:
                        await session.call_tool("get_postmortem", {"trace_id": trace_id})
                    answers.append(
                        (caught.value.code, caught.value.message.replace(trace_id, "ID"))
                    )
                with pytest.raises(MCPError) as bad:
                    await session.call_tool("get_call", {"trace_id": hidden, "index": -1})
            return refused, said, answers, bad.value

        refused, said, answers, bad = anyio.run(scenario)
    for who in ("none", "revoked", "not ours"):
        response = raw[who]
        assert response.status_code == 401, (who, response.status_code, response.text)
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="loop-inspector"'
        assert response.json()["error"]["code"] == -32001
    assert "Send an API token with read scope" in raw["none"].json()["error"]["message"]
    assert raw["revoked"].json()["error"]["message"] == "Unknown or revoked API token."
    assert raw["ingest"].status_code == 403
    assert raw["read"].status_code == 200
    assert raw["read"].json()["result"]["serverInfo"]["name"] == "loop-inspector"
    assert len(refused) == 2
    assert str(world.good.pk) in said["list_traces"]
    assert hidden not in said["list_traces"]
    # The post-mortem links the trace's page on the address the agent used.
    assert f"{base}/traces/{world.planted.pk}/" in said["get_postmortem"]
    assert answers[0] == answers[1] == (-32602, "No such trace: ID")
    assert bad.code == -32602 and "index" in bad.message


def test_local_mode_over_http(world, tmp_path):
    env = process_env(tmp_path, shared=False)
    with daphne(env, tmp_path / "daphne.log") as base:
        url = f"{base}/mcp/"
        # A page of another origin may not drive it, even on this machine.
        foreign = httpx.post(
            url, json=INITIALIZE, headers={**ACCEPT, "Origin": "http://evil.example"}, timeout=30
        )

        async def scenario():
            async with http_session(url) as session:
                return await check_every_tool(session, world)

        said = anyio.run(scenario)
    assert foreign.status_code == 403 and foreign.headers["X-Access-Denied"] == "cross-site"
    assert str(world.hidden.pk) in said["list_traces"]  # local mode: every project
