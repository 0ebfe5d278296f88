"""OpenRouter through the recording proxy (issue 23): the official openai SDK, pointed at
`/proxy/openrouter/api/v1` as OpenRouter's docs point it at `https://openrouter.ai/api/v1`,
in front of a local stand-in of OpenRouter replaying recorded OpenAI-shaped answers. The
calls reach OpenRouter's own path, are recorded as OpenAI Chat Completions, and the key
goes on without being stored; a base URL missing OpenRouter's `api/` is told the one to use."""

from __future__ import annotations

import json

import openai
import pytest

from tests.capture.scenario import OPENAI_SECRET

pytestmark = pytest.mark.corpus

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    }
]


def openrouter_at(server, base: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=OPENAI_SECRET, base_url=server.base + base, max_retries=0)


def test_the_openai_sdk_on_openrouter_records_a_tool_loop(inspector_server, upstream):
    client = openrouter_at(inspector_server, "/proxy/s/sdk-openrouter/openrouter/api/v1")
    messages: list[dict] = [{"role": "user", "content": "What's the weather in Seattle and SF?"}]
    raw = client.chat.completions.with_raw_response.create(
        model="openai/gpt-4o-mini", messages=messages, tools=TOOLS
    )
    assert raw.http_response.content == upstream.sent[-1]  # the stand-in's bytes
    sent = upstream.received[-1]
    assert sent.path == "/api/v1/chat/completions"  # OpenRouter's own path
    assert sent.headers.get("Authorization") == f"Bearer {OPENAI_SECRET}"
    first = raw.parse()
    calls = first.choices[0].message.tool_calls
    assert calls
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    messages += [{"role": "tool", "tool_call_id": c.id, "content": "rain"} for c in calls]
    stream = client.chat.completions.create(
        model="openai/gpt-4o-mini", messages=messages, tools=TOOLS, stream=True
    )
    assert list(stream)

    trace_id = inspector_server.trace_id("proxy:openai-chat:sdk-openrouter")
    report = inspector_server.wait_report(trace_id, calls=2)
    assert report["format"] == "openai-chat"
    assert report["calls"][0]["stop_reason"] == "tool_use"
    assert [r["status"] for r in report["tool_runs"]].count("paired") == len(calls)
    stored = inspector_server.rows("SELECT * FROM traces_blob")
    assert stored and OPENAI_SECRET not in repr(stored)  # the key went on, never into the store


@pytest.mark.parametrize(
    ("base", "hint", "to_use"),
    [
        (
            "/proxy/openrouter/v1",
            "is not under /proxy/openrouter/api/v1",
            "/proxy/openrouter/api/v1",
        ),
        (
            "/proxy/openrouter/api/v1/v1",
            "has /v1 twice",
            "/proxy/openrouter/api/v1/chat/completions",
        ),
    ],
)
def test_a_wrong_openrouter_base_url_is_told_the_one_to_use(
    inspector_server, upstream, base, hint, to_use
):
    before = len(upstream.received)
    with pytest.raises(openai.NotFoundError) as caught:
        openrouter_at(inspector_server, base).chat.completions.create(
            model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
        )
    assert hint in str(caught.value) and to_use in str(caught.value)
    body = json.loads(caught.value.response.content)
    assert set(body["error"]) >= {"message", "type", "code"}  # OpenAI's shape, which it speaks
    assert len(upstream.received) == before
