"""What the pages show for the new formats: hook events and the SDK's session result on
the call page, pairing methods and mapping notes on the trace page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.golden import golden_input

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "mapping-examples"


def _upload(client, name: str, data: bytes, **fields) -> str:
    reply = client.post(
        reverse("traces:api-traces"), {"file": SimpleUploadedFile(name, data), **fields}
    )
    assert reply.status_code == 201, reply.content
    return reply.json()["id"]


def test_call_page_shows_hook_events_and_the_session_result(client):
    trace_id = _upload(client, "stream.jsonl", golden_input("claude-agent-sdk/stream.jsonl"))
    first = client.get(reverse("traces:call", args=[trace_id, 1])).content.decode()
    assert "Hook events" in first and "PreToolUse" in first and "approve" in first
    last = client.get(reverse("traces:call", args=[trace_id, 4])).content.decode()
    assert "Session result" in last and "$0.012" in last
    assert "subagents included" in last


def test_trace_page_marks_runs_paired_without_ids(client):
    trace_id = _upload(client, "trace.json", golden_input("langfuse/trace.json"))
    page = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert "or as marked where the format records no id" in page
    assert "by name and arguments" in page


def test_trace_page_shows_mapping_notes(client):
    mapping = (
        (EXAMPLES / "chat-log.mapping.yaml").read_text().replace("tokens.cached", "tokens.cahced")
    )
    trace_id = _upload(
        client, "chat-log.jsonl", (EXAMPLES / "chat-log.jsonl").read_bytes(), mapping=mapping
    )
    page = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert "usage.cache_read_tokens (&#x27;tokens.cahced&#x27;) matched nothing" in page
