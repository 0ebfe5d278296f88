"""Hostile Markdown is inert in every MCP answer: a trace whose name and tool names are
links, HTML and backticks shows them only inside code spans or fenced blocks, in the
Markdown of every tool (the SDK's in-memory client; stdio and HTTP are tested elsewhere)."""

from __future__ import annotations

import re

import anyio
import orjson
from mcp import Client

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.mcp_server.server import build_server
from traces.services.upload import trace_upload

EVIL_TOOL = "se`arch](http://evil.example/t)<img src=x onerror=alert(2)>|"
EVIL_NAME = "run ``` [x](http://evil.example/n) <script>alert(1)</script> | ~~"
FENCED = re.compile(r"^(`{3,})[^\n]*\n.*?\n\1$", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def outside_code(markdown: str) -> str:
    """The Markdown with every fenced block and code span taken out."""
    return INLINE.sub("", FENCED.sub("", markdown))


def test_hostile_names_stay_inside_code(transactional_db):
    data = ndjson(agent_lines(4)).replace(b'"search"', orjson.dumps(EVIL_TOOL))
    trace = trace_upload(
        files=[("evil.jsonl", data)], name=EVIL_NAME, project=models.Project.default()
    ).trace
    other = trace_upload(
        files=[("other.jsonl", ndjson(agent_lines(2)))], name="plain", project=trace.project
    ).trace
    assert EVIL_TOOL in trace.tool_names
    ids = {"trace_id": str(trace.pk)}
    calls = [
        ("list_traces", {}),
        ("get_postmortem", ids),
        ("get_call", {**ids, "index": 1}),
        ("lint", ids),
        ("what_if", {**ids, "caps": {EVIL_TOOL: 5}}),
        ("compare", {"a": str(trace.pk), "b": str(other.pk)}),
    ]

    async def scenario():
        async with Client(build_server()) as client:
            return {name: await client.call_tool(name, args) for name, args in calls}

    results = anyio.run(scenario)
    for name, result in results.items():
        text = result.content[0].text
        assert not result.is_error, (name, text)
        assert "evil.example" in text or name == "lint", name  # shown, as code
        rest = outside_code(text)
        for marker in ("evil.example", "<img", "<script", "onerror"):
            assert marker not in rest, (name, marker, rest)
    assert EVIL_TOOL in results["get_call"].content[0].text.replace("\\|", "|")


def test_the_postmortem_carries_the_notes_and_their_markdown_stays_inert(transactional_db):
    """A person's root-cause note reaches an agent asking for the post-mortem, hostile
    Markdown in it fenced like the rest (the Markdown export's rendering)."""
    from traces.access.principals import Principal
    from traces.services.notes import note_add

    trace = trace_upload(
        files=[("run.jsonl", ndjson(agent_lines(4)))], name="run", project=models.Project.default()
    ).trace
    note_add(
        who=Principal(),
        trace=trace,
        call_index=2,
        root_cause=True,
        text="The search tool timed out [here](javascript:alert(1)) <script>alert(3)</script>",
    )

    async def scenario():
        async with Client(build_server()) as client:
            return await client.call_tool("get_postmortem", {"trace_id": str(trace.pk)})

    text = anyio.run(scenario).content[0].text
    assert "The search tool timed out" in text and "root cause" in text.lower()
    rest = outside_code(text)
    assert "javascript:" not in rest and "<script" not in rest
