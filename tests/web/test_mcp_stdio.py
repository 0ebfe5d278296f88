"""`loop-inspector mcp` over stdio, spawned as a real process and driven by the official
SDK's client (`stdio_client` + `ClientSession`) on the test's own database.

Every tool answers Markdown and structured content; the agent's question "why did my
last run fail and what should I change?" is two calls; bad arguments and unknown traces
are MCP errors; in shared mode nothing answers without a read token, and a token sees its
project only, a hidden trace answering exactly as a missing one; no answer carries the key
planted in a recorded trace's headers.
"""

from __future__ import annotations

import uuid

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.web.mcp_world import (
    HOSTILE_NAME,
    build_mcp_world,
    check_every_tool,
    process_env,
    stdio_session,
)
from traces.core.outputs.export_md import code


@pytest.fixture
def world(transactional_db, settings, corpus):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_mcp_world(corpus)


def test_every_tool_over_stdio_in_local_mode(world, tmp_path):
    async def scenario():
        async with stdio_session(process_env(tmp_path, shared=False)) as session:
            said = await check_every_tool(session, world)
            # Local mode: one person, every project (as the pages show).
            assert str(world.hidden.pk) in said["list_traces"]
            # Why did my last run fail, and what should I change?
            last = await session.call_tool(
                "list_traces", {"failed": True, "sort": "-date", "limit": 1}
            )
            rows = last.structured_content["traces"]
            assert [row["id"] for row in rows] == [str(world.failed.pk)]
            assert rows[0]["outcome"] == "halted_on_tool_use"
            pm = await session.call_tool("get_postmortem", {"trace_id": rows[0]["id"]})
            text = pm.content[0].text
            assert text.startswith("# Post-mortem: `halted run`")
            assert "## What would have saved the most" in text
            assert pm.structured_content["outcome"]["kind"] == "halted_on_tool_use"
            assert pm.structured_content["top_fixes"], "the top fixes, as data too"
            # Hostile Markdown in a name stays inside code spans.
            hostile = await session.call_tool("get_postmortem", {"trace_id": str(world.hostile.pk)})
            assert code(HOSTILE_NAME) in hostile.content[0].text
            listed = await session.call_tool("list_traces", {"q": "onerror"})
            assert code(HOSTILE_NAME).replace("|", "\\|") in listed.content[0].text
            return said

    said = anyio.run(scenario)
    assert "| id | name |" in said["list_traces"]
    assert "Cap tool results" in said["what_if"] and "clear after 2" in said["what_if"]
    assert said["compare"].startswith("# Compare `planted run` (A) with `alpha run` (B)")
    assert "# Call 1 of `planted run`" in said["get_call"]
    assert "# Spend and tokens per day" in said["usage"]


def test_errors_are_mcp_errors(world, tmp_path):
    trace = str(world.good.pk)
    bad_calls = [
        ("get_postmortem", {"trace_id": str(uuid.uuid4())}, "No such trace"),
        ("get_postmortem", {"trace_id": "not-an-id"}, "No such trace"),
        ("get_call", {"trace_id": trace, "index": 999}, "No such call: 999"),
        ("get_call", {"trace_id": trace, "index": "one"}, "index"),
        ("get_call", {"trace_id": trace}, "'index' is a required property"),
        ("list_traces", {"limit": 0}, "limit: 0 is less than the minimum of 1"),
        ("list_traces", {"date_from": "yesterday"}, "'yesterday' is not a date"),
        ("list_traces", {"sort": "-price"}, "sort: '-price' is not one of"),
        ("lint", {"trace_id": trace, "severity": "fatal"}, "severity"),
        ("what_if", {"trace_id": trace, "cache_lifetime": "2h"}, "cache_lifetime"),
        ("what_if", {"trace_id": trace, "caps": {"search": -5}}, "a cap is a number of tokens"),
        ("usage", {"since": "May"}, "since: 'May' is not a date"),
        ("compare", {"a": trace, "b": str(uuid.uuid4())}, "No such trace"),
    ]

    async def scenario():
        found = []
        async with stdio_session(process_env(tmp_path, shared=False)) as session:
            for name, arguments, _ in bad_calls:
                with pytest.raises(MCPError) as caught:
                    await session.call_tool(name, arguments)
                found.append((caught.value.code, caught.value.message))
            # The server is still there after them.
            ok = await session.call_tool("lint", {"trace_id": trace})
            assert not ok.is_error
        return found

    found = anyio.run(scenario)
    for (name, arguments, wanted), (error_code, message) in zip(bad_calls, found, strict=True):
        assert error_code == -32602, (name, arguments, error_code)
        assert wanted in message, (name, arguments, message)


def test_shared_mode_wants_a_read_token_and_shows_its_project_only(world, tmp_path):
    hidden, missing = str(world.hidden.pk), str(uuid.uuid4())

    async def refused(env) -> list[str]:
        messages = []
        async with stdio_session(env) as session:
            for name, arguments in (("list_traces", {}), ("get_postmortem", {"trace_id": hidden})):
                with pytest.raises(MCPError) as caught:
                    await session.call_tool(name, arguments)
                messages.append(caught.value.message)
        return messages

    async def scenario():
        without = await refused(process_env(tmp_path, shared=True))
        ingest_only = await refused(
            process_env(tmp_path, shared=True, token=world.team.secrets["ingest_token"])
        )
        revoked = await refused(
            process_env(tmp_path, shared=True, token=world.team.secrets["revoked_token"])
        )
        env = process_env(tmp_path, shared=True, token=world.read_token)
        async with stdio_session(env) as session:
            said = await check_every_tool(session, world)
            usage = await session.call_tool("usage", {"period": "month"})
            counted = usage.structured_content["totals"]["sessions"]
            answers = []
            for trace_id in (hidden, missing):
                with pytest.raises(MCPError) as caught:
                    await session.call_tool("get_postmortem", {"trace_id": trace_id})
                answers.append((caught.value.code, caught.value.message.replace(trace_id, "ID")))
        return without, ingest_only, revoked, said, answers, counted

    without, ingest_only, revoked, said, answers, counted = anyio.run(scenario)
    assert all("send an API token with read scope" in m for m in without), without
    assert ingest_only == ["No read access.", "No read access."]
    assert revoked == ["Unknown or revoked API token."] * 2
    assert str(world.good.pk) in said["list_traces"]
    assert str(world.hidden.pk) not in said["list_traces"]
    assert counted == 4, "alpha's four traces, never beta's"
    # A hidden trace answers exactly as a missing one: no existence oracle.
    assert answers[0] == answers[1] == (-32602, "No such trace: ID")
