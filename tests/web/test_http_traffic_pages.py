"""Pages for recordings with non-model HTTP traffic and tools paired without ids: the
traffic is listed (escaped), and tool runs say how they were paired and where they ran."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.golden import golden_input

pytestmark = pytest.mark.django_db


def _upload(client, data: bytes, name: str) -> str:
    reply = client.post(reverse("traces:api-traces"), {"file": SimpleUploadedFile(name, data)})
    assert reply.status_code == 201, reply.content[:300]
    return reply.json()["id"]


def test_mcp_traffic_is_listed_and_the_tool_run_says_via_mcp(client):
    trace_id = _upload(client, golden_input("mcp/tools_over_mcp.yaml"), "mcp.yaml")
    page = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert "Other HTTP traffic" in page
    assert "9 recorded interactions that are not model calls" in page
    assert "MCP tools/call search_docs" in page and "isError" in page
    assert page.count(">via MCP</span>") == 2
    report = client.get(reverse("traces:api-trace", args=[trace_id])).json()
    assert report["totals"]["calls"] == 2 and len(report["other_traffic"]) == 9


def test_gemini_runs_and_call_page_show_the_name_and_order_ids(client):
    trace_id = _upload(client, golden_input("gemini/trip_loop.jsonl"), "gemini.jsonl")
    page = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert "as marked where the format records no id" in page and "by name and order" in page
    call = client.get(reverse("traces:call", args=[trace_id, 2])).content.decode()
    # the echoed model turn and its results carry the ids the tool runs have
    assert call.count("get_weather@1#1") >= 2 and "by name and order" in call


def test_traffic_text_is_escaped(client):
    hostile = "https://evil.example/<script>alert(1)</script>"
    data = (
        b'{"request": {"url": "' + hostile.encode() + b'", "method": "POST", "body": {}},'
        b' "response": {"status_code": 200, "body": {}}}\n' + golden_input("gemini/trip_loop.jsonl")
    )
    trace_id = _upload(client, data, "mixed.jsonl")
    page = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
