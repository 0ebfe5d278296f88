"""The MCP tests' world and client: real traces in two projects, and the SDK's own client.

Built on the team world (tests/web/team_world.py: alpha with its tokens, beta), plus in
alpha a run that halted on a tool call (the "failed" one, stored last), a real claude-trace recording
with a live-looking key planted in its headers, and a trace whose name is hostile
Markdown; in beta a trace alpha's token may not see. The processes the tests start read
this database (committed: the tests use `transaction=True`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.hostile.deployment import shared_database_url
from tests.live.events import agent_lines, ndjson
from tests.live.servers import ROOT, server_env
from tests.web.team_world import World, build_world
from tests.web.test_secrets_and_deletion import PLANTED, planted_trace_bytes
from traces import models
from traces.services.upload import trace_upload

HOSTILE_NAME = "run <img src=x onerror=alert(1)> [click](http://evil.example) `tick` | pipe"
TOOLS = ("compare", "get_call", "get_postmortem", "lint", "list_traces", "usage", "what_if")


@dataclass
class McpWorld:
    team: World
    good: models.Trace
    failed: models.Trace
    planted: models.Trace
    hostile: models.Trace
    hidden: models.Trace

    @property
    def read_token(self) -> str:
        return self.team.secrets["read_token"]


def build_mcp_world(corpus) -> McpWorld:
    team = build_world()
    alpha, beta = team.alpha, team.beta
    planted = trace_upload(
        files=[("traffic.jsonl", planted_trace_bytes(corpus))], name="planted run", project=alpha
    ).trace
    hostile = trace_upload(
        files=[("hostile.jsonl", ndjson(agent_lines(2)))], name=HOSTILE_NAME, project=alpha
    ).trace
    hidden = trace_upload(
        files=[("beta.jsonl", ndjson(agent_lines(2)))], name="beta secret run", project=beta
    ).trace
    failed = trace_upload(
        files=[("halted.jsonl", ndjson(agent_lines(3, finish=False)))],
        name="halted run",
        project=alpha,
    ).trace
    return McpWorld(team, team.trace, failed, planted, hostile, hidden)


def process_env(folder, *, shared: bool, token: str = "") -> dict[str, str]:
    """The environment of a server process on the test's database."""
    overrides = {
        "DATABASE_URL": shared_database_url(),
        "INSPECTOR_DATA_DIR": str(folder),
        "INSPECTOR_QUEUE": "embedded",
        "REDIS_URL": "",
        "LOOP_INSPECTOR_TOKEN": token,
    }
    if shared:
        overrides |= {
            "INSPECTOR_AUTH": "1",
            "DJANGO_SECRET_KEY": "mcp-tests-" + "x" * 50,
            "DJANGO_DEBUG": "",
            "INSPECTOR_HTTPS": "0",
        }
    else:
        overrides |= {"INSPECTOR_AUTH": "", "ALLOWED_HOSTS": ""}
    return server_env(**overrides)


@asynccontextmanager
async def stdio_session(env: dict[str, str]):
    """`loop-inspector mcp` as a subprocess, through the SDK's stdio client."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "inspector.cli", "mcp"], env=env, cwd=str(ROOT)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None):
    """The SDK's streamable-HTTP client on `url`, sending `headers` (a token)."""
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def everything_said(result: Any) -> str:
    """The text and the structured content of a tool result, as one string to search."""
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(texts) + json.dumps(result.structured_content, default=str)


def every_tool_call(world: McpWorld) -> list[tuple[str, dict[str, Any]]]:
    """One call of each tool, on the planted trace where a tool takes one."""
    planted, good = str(world.planted.pk), str(world.good.pk)
    return [
        ("list_traces", {"limit": 100}),
        ("get_postmortem", {"trace_id": planted}),
        ("get_call", {"trace_id": planted, "index": 1}),
        ("lint", {"trace_id": planted}),
        ("what_if", {"trace_id": planted, "clear_after": 2}),
        ("compare", {"a": planted, "b": good}),
        ("usage", {"period": "day"}),
    ]


async def check_every_tool(
    session: ClientSession, world: McpWorld, *, visible: set[str] | None = None
) -> dict[str, str]:
    """Call every tool once; no answer may hold the planted key. Returns what each said."""
    listed = await session.list_tools()
    assert tuple(sorted(tool.name for tool in listed.tools)) == TOOLS
    for tool in listed.tools:
        assert tool.input_schema["type"] == "object", tool.name
    said = {}
    for name, arguments in every_tool_call(world):
        result = await session.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        assert result.structured_content, name
        said[name] = everything_said(result)
        assert PLANTED not in said[name], name
        assert PLANTED[:24] not in said[name], name
    return said


Scenario = Callable[[], Awaitable[Any]]
