"""The call page shows the messages ingest normalised, stored with the call: never a second
reading of the raw messages with an adapter (which saw less than ingest did)."""

from __future__ import annotations

import io
import re

import orjson
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.golden import golden_input
from traces import models
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.compare import transcript_of
from traces.core.reading.sample import sample_bytes
from traces.selectors.compare import stored_transcript
from traces.selectors.traces import call_messages
from traces.services.ingest import trace_reanalyze
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db


def _page(trace: models.Trace, index: int, client) -> str:
    reply = client.get(reverse("traces:call", args=[trace.pk, index]))
    assert reply.status_code == 200
    return reply.content.decode()


def test_inspect_attachments_show_as_ingest_resolved_them(client):
    data = golden_input("inspect-ai/tool_loop.json")
    trace = trace_upload(files=[("tool_loop.json", data)], name="inspect").trace
    page = _page(trace, 1, client)
    # The raw system message is only a reference; ingest read the attachment behind it.
    assert b"attachment://0f343b0931126a20f133d67c2b018a3b" in data
    assert "You are a shell agent. Use the bash tool" in page


def test_gemini_responses_carry_the_ids_the_tool_runs_have(client):
    trace = trace_upload(
        files=[("trip_loop.jsonl", golden_input("gemini/trip_loop.jsonl"))], name="gemini"
    ).trace
    page = _page(trace, 1, client)
    assert '<code class="id">get_weather@1#1</code>' in page
    assert '<code class="id">get_weather@1#2</code>' in page


def test_a_trace_of_two_formats_shows_each_call_as_its_own_format_read_it(client):
    trace = trace_upload(
        files=[
            ("chat.jsonl", golden_input("openai-chat/agent_loop.jsonl")),
            ("gemini.jsonl", golden_input("gemini/trip_loop.jsonl")),
        ],
        name="mixed",
    ).trace
    assert trace.format == "openai-chat"  # the row names the first format only
    gemini_calls = [
        call.index
        for call in trace.calls.all()
        if any("get_weather@" in tool_id for tool_id in call.tool_call_ids)
    ]
    assert gemini_calls
    assert '<code class="id">get_weather@' in _page(trace, gemini_calls[0], client)


def test_the_page_reads_no_adapter_even_for_a_format_it_does_not_know(client):
    trace = trace_upload(files=[("", sample_bytes())], name="sample").trace
    models.Trace.objects.filter(pk=trace.pk).update(format="retired-format")
    trace.refresh_from_db()
    page = _page(trace, 2, client)
    assert "block block-tool-result" in page and "block block-tool-use" in page


def test_calls_stored_before_are_shown_raw_until_reanalyzed(client):
    trace = trace_upload(files=[("", sample_bytes())], name="sample").trace
    expected = transcript_of(analyze_bytes(sample_bytes()))
    assert stored_transcript(trace) == expected
    trace.calls.update(appended_message_digests=None, response_message_digest="")
    assert call_messages(call=trace.calls.get(index=2)) is None
    page = _page(trace, 2, client)
    assert "block block-tool-use" not in page
    assert '<article class="message role-assistant">' in page and 'class="j-obj"' in page
    assert stored_transcript(trace) == []

    untouched = trace_upload(files=[("", sample_bytes())], name="current").trace
    out = io.StringIO()
    call_command("reanalyze", "--missing-messages", stdout=out)
    assert str(trace.pk) in out.getvalue() and str(untouched.pk) not in out.getvalue()
    trace.refresh_from_db()
    assert "block block-tool-use" in _page(trace, 2, client)
    assert stored_transcript(trace) == expected


def test_normalised_messages_are_content_addressed_and_small():
    trace = trace_upload(files=[("", sample_bytes())], name="sample").trace
    calls = list(trace.calls.all())
    digests = [d for call in calls for d in call.appended_message_digests]
    assert len(digests) == sum(len(call.appended_digests) for call in calls)
    assert all(models.Blob.objects.filter(digest=d).exists() for d in set(digests))
    again = trace_upload(files=[("", sample_bytes())], name="again").trace
    blobs_before = models.Blob.objects.count()
    trace_reanalyze(trace=again)
    assert models.Blob.objects.count() == blobs_before  # the same messages, stored once


def test_a_response_that_is_a_list_of_items_shows_as_a_message(client):
    """Codex and OpenTelemetry record a response as output items, not one message: the
    page used to show only their JSON; it now shows the message ingest read from them."""
    trace = trace_upload(
        files=[("session.jsonl", golden_input("codex-rollout/session.jsonl"))], name="codex"
    ).trace
    page = _page(trace, 1, client)
    response = page.split('id="response-title"', 1)[1]
    assert '<code class="id">call_a</code>' in response
    assert '<details class="raw-json"><summary>Response JSON</summary>' in page


def test_a_long_requests_page_reads_only_the_messages_its_call_appended(client):
    """Past the messages the page folds inline, the call page reads the blobs of the
    messages its call appended, not of every message the request carried."""
    messages: list[dict] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the test."},
    ]
    for n in range(90):
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "grep", "arguments": "{}"},
        }
        messages.append({"role": "assistant", "content": f"Step {n}.", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": f"found {n}"})
    messages.append({"role": "assistant", "content": "Done."})
    data = orjson.dumps({"messages": messages})
    trace = trace_upload(files=[("long.json", data)], name="long").trace
    last = trace.calls.order_by("-index").first()
    assert last.prefix_len == 180  # it appended the last step and its result
    with CaptureQueriesContext(connection) as queries:
        page = _page(trace, last.index, client)
    assert "All 182 messages: too many to fold here." in page
    assert "found 89" in page and "Step 89." in page
    assert "found 88" not in page  # in the prefix: not shown, and not read
    digests_read = sum(
        len(re.findall(r"'[0-9a-f]{32,}'", q["sql"]))
        for q in queries.captured_queries
        if "traces_blob" in q["sql"]
    )
    assert 2 <= digests_read <= 8, digests_read
