"""The pages show the loop semantics the core finds: inferred errors apart from flagged
ones, the tool call a failed generation attempted, and the compaction point."""

from __future__ import annotations

import re

import orjson
import pytest
from django.urls import reverse

from tests.core.test_compaction import _codex, _line
from tests.core.test_failed_generation import TAG, _error
from tests.core.test_failed_generation import _line as chat_line
from tests.core.test_inferred_errors import SDK_FAILURE
from tests.web.test_api_and_pages import upload

pytestmark = pytest.mark.django_db


def _chat_with_sdk_failure() -> bytes:
    q = [{"role": "user", "content": "fetch the page"}]
    call = {"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}
    ask = {"role": "assistant", "content": None, "tool_calls": [call]}
    out = {"role": "tool", "tool_call_id": "c1", "content": SDK_FAILURE}
    done = {"role": "assistant", "content": "It failed."}

    def line(messages, message, finish):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        reply = {"id": "x", "object": "chat.completion", "model": "gpt-4o", "choices": [choice]}
        return orjson.dumps(
            {"request": {"model": "gpt-4o", "messages": messages}, "response": reply}
        )

    return line(q, ask, "tool_calls") + b"\n" + line([*q, ask, out], done, "stop") + b"\n"


def test_inferred_error_is_shown_with_its_reason_apart_from_flagged_errors(client):
    body = upload(client, _chat_with_sdk_failure(), "chat.jsonl").json()
    page = client.get(body["url"]).content.decode()
    assert "inferred error" in page
    assert "the text says &quot;An error occurred while running the tool&quot;" in page
    assert "error result</span>" not in page  # nothing was flagged
    call = client.get(reverse("traces:call", args=[body["id"], 2])).content.decode()
    assert "inferred error" in call
    postmortem = client.get(reverse("traces:postmortem", args=[body["id"]])).content.decode()
    assert "Inferred error tool results" in postmortem
    assert "Error tool results <span" not in postmortem


def test_failed_generation_is_shown_on_the_failed_call(client):
    q = [{"role": "user", "content": "read b.txt"}]
    data = chat_line(q, 400, _error(TAG)) + b"\n"
    body = upload(client, data, "groq.jsonl").json()
    call = client.get(reverse("traces:call", args=[body["id"], 1])).content.decode()
    assert "What the model tried to call" in call
    assert "read_file" in call
    assert "&lt;function=read_file&gt;" in call  # the raw text, escaped


def test_compaction_point_is_drawn_on_the_trace_page(client):
    summary = {"message": "Summary: the tests were run and pass."}
    data = _codex(_line("2025-09-20T10:00:05Z", "compacted", summary))
    body = upload(client, data, "rollout.jsonl").json()
    page = client.get(body["url"]).content.decode()
    assert 'class="compaction"' in page
    assert "history compacted" in page


def test_loop_heading_counts_its_calls(client):
    # The heading once read "0 calls": `size|default:calls|length` took the length of a
    # number.
    summary = {"message": "Summary: the tests were run and pass."}
    data = _codex(_line("2025-09-20T10:00:05Z", "compacted", summary))
    body = upload(client, data, "rollout.jsonl").json()
    page = client.get(body["url"]).content.decode()
    text = re.sub(r"<[^>]+>", "", page)  # the model name carries <wbr> break points
    assert "2 calls · gpt-5-codex" in text
    assert "0 calls ·" not in text


def test_the_diagram_links_each_call_to_its_page_by_the_url_conf(client):
    body = upload(client, _chat_with_sdk_failure(), "chat.jsonl").json()
    page = client.get(body["url"]).content.decode()
    call_page = reverse("traces:call", args=[body["id"], 2])
    assert f'<a href="{call_page}" aria-label="#2 request' in page
    assert client.get(call_page).status_code == 200
