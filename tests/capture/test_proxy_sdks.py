"""The real anthropic and openai SDKs, pointed at the proxy on a live daphne, in front of a
fake upstream replaying recorded corpus responses: they get the upstream's bytes, and the
trace shows the calls, the tool runs and the usage."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest

from tests.capture.scenario import OPENAI_SECRET, SECRET

pytestmark = pytest.mark.corpus

TOOLS = [
    {
        "name": "get_weather",
        "description": "Get the current weather in a given location",
        "input_schema": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
        },
    },
    {
        "name": "get_time",
        "description": "Get the current time in a given time zone",
        "input_schema": {
            "type": "object",
            "properties": {"timezone": {"type": "string"}},
            "required": ["timezone"],
        },
    },
]
QUESTION = "What is the weather like right now in New York? Also what time is it there?"


def anthropic_client(inspector_server, session: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key=SECRET,
        base_url=f"{inspector_server.base}/proxy/s/{session}/anthropic",
        max_retries=0,
    )


def run_tools(content: list) -> list[dict]:
    """The agent's side of the loop: one result per tool call, by id."""
    return [
        {"type": "tool_result", "tool_use_id": block.id, "content": f"{block.name}: ok"}
        for block in content
        if block.type == "tool_use"
    ]


def test_anthropic_sdk_non_streaming_tool_loop(inspector_server, upstream):
    client = anthropic_client(inspector_server, "sdk-anthropic")
    messages: list[dict] = [{"role": "user", "content": QUESTION}]
    raw = client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=1024, tools=TOOLS, messages=messages
    )
    assert raw.http_response.content == upstream.sent[-1]
    first = raw.parse()
    assert first.stop_reason == "tool_use"
    results = run_tools(first.content)
    assert len(results) == 2
    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {"role": "user", "content": results},
    ]
    final = client.messages.create(
        model="claude-sonnet-4-6", max_tokens=1024, tools=TOOLS, messages=messages
    )
    assert final.stop_reason == "end_turn"
    forwarded = upstream.received[-1].headers
    credential = forwarded.get("X-Api-Key") or forwarded.get("Authorization", "")
    assert credential.removeprefix("Bearer ") == SECRET  # forwarded as the SDK sent it

    trace_id = inspector_server.trace_id("proxy:anthropic-messages:sdk-anthropic")
    report = inspector_server.wait_report(trace_id, calls=2)
    assert report["format"] == "anthropic-messages"
    calls = report["calls"]
    assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn"]
    assert calls[0]["input_tokens"] > 0
    assert len(report["tool_runs"]) == 2
    assert {r["status"] for r in report["tool_runs"]} == {"paired"}
    assert {r["name"] for r in report["tool_runs"]} == {"get_weather", "get_time"}
    page = inspector_server.get(f"/traces/{trace_id}/").decode()
    assert "get_weather" in page


def test_anthropic_sdk_streaming_tool_loop(inspector_server, upstream):
    client = anthropic_client(inspector_server, "sdk-anthropic-stream")
    messages: list[dict] = [{"role": "user", "content": QUESTION}]
    with client.messages.with_streaming_response.create(
        model="claude-sonnet-4-6", max_tokens=1024, tools=TOOLS, messages=messages, stream=True
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        received = b"".join(response.iter_bytes())
    assert received == upstream.sent[-1]  # byte-identical, SSE padding and all

    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=1024, tools=TOOLS, messages=messages
    ) as stream:
        first = stream.get_final_message()
    assert first.stop_reason == "tool_use"
    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {"role": "user", "content": run_tools(first.content)},
    ]
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=1024, tools=TOOLS, messages=messages
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "end_turn"

    trace_id = inspector_server.trace_id("proxy:anthropic-messages:sdk-anthropic-stream")
    report = inspector_server.wait_report(trace_id, calls=3)
    calls = report["calls"]
    assert [c["stop_reason"] for c in calls] == ["tool_use", "tool_use", "end_turn"]
    assert all(c["status"] == "ok" for c in calls)
    assert calls[0]["output_tokens"] > 4  # from message_delta, not message_start
    paired = [r for r in report["tool_runs"] if r["status"] == "paired"]
    assert len(paired) == 2


def test_openai_sdk_chat_tool_loop_streaming_and_not(inspector_server, upstream):
    client = openai.OpenAI(
        api_key=OPENAI_SECRET,
        base_url=f"{inspector_server.base}/proxy/openai/v1",
        default_headers={"X-Loop-Inspector-Session": "sdk-openai"},
        max_retries=0,
    )
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_current_weather",
                "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
            },
        }
    ]
    messages: list[dict] = [{"role": "user", "content": "What's the weather in Seattle and SF?"}]
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=messages, tools=tools
    )
    assert raw.http_response.content == upstream.sent[-1]
    first = raw.parse()
    calls = first.choices[0].message.tool_calls
    assert calls and first.choices[0].finish_reason == "tool_calls"
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    messages += [
        {"role": "tool", "tool_call_id": call.id, "content": "50 degrees and raining"}
        for call in calls
    ]
    final = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools)
    assert final.choices[0].finish_reason == "stop"

    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=messages[:1], tools=tools, stream=True
    )
    chunks = list(stream)
    assert any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
    assert upstream.received[-1].headers.get("Authorization") == f"Bearer {OPENAI_SECRET}"

    trace_id = inspector_server.trace_id("proxy:openai-chat:sdk-openai")
    report = inspector_server.wait_report(trace_id, calls=3)
    assert report["format"] == "openai-chat"
    assert [c["stop_reason"] for c in report["calls"]] == ["tool_use", "end_turn", "tool_use"]
    paired = [r for r in report["tool_runs"] if r["status"] == "paired"]
    assert len(paired) == len(calls)
    assert report["calls"][0]["output_tokens"] > 0


def test_openai_sdk_responses_tool_loop(inspector_server, upstream):
    client = openai.OpenAI(
        api_key=OPENAI_SECRET,
        base_url=f"{inspector_server.base}/proxy/s/sdk-responses/openai/v1",
        max_retries=0,
    )
    first = client.responses.create(model="gpt-4o-mini", input="What's the weather like?")
    call = next(item for item in first.output if item.type == "function_call")
    final = client.responses.create(
        model="gpt-4o-mini",
        input=[
            {"role": "user", "content": "What's the weather like?"},
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"},
        ],
    )
    assert final.output_text
    trace_id = inspector_server.trace_id("proxy:openai-responses:sdk-responses")
    report = inspector_server.wait_report(trace_id, calls=2)
    assert report["format"] == "openai-responses"
    assert [r["status"] for r in report["tool_runs"]] == ["paired"]


def test_other_paths_pass_through_unrecorded(inspector_server):
    client = anthropic_client(inspector_server, "sdk-models")
    models = client.models.list()
    assert [m.id for m in models.data] == ["claude-sonnet-4-6"]
    assert not inspector_server.rows(
        "SELECT id FROM traces_trace WHERE capture_key LIKE ?", "proxy:%:sdk-models"
    )


def test_upstream_errors_pass_through_and_are_failed_calls(inspector_server, upstream):
    client = anthropic_client(inspector_server, "errors")
    with pytest.raises(anthropic.RateLimitError) as caught:
        client.messages.create(
            model="error-429", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 429
    assert caught.value.response.content == upstream.sent[-1]
    with pytest.raises(anthropic.InternalServerError):
        client.messages.create(
            model="error-500", max_tokens=10, messages=[{"role": "user", "content": "hi again"}]
        )
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:errors")
    report = inspector_server.wait_report(trace_id, calls=2)
    statuses = [(c["status"], c["http_status"]) for c in report["calls"]]
    assert statuses == [("error", 429), ("error", 500)]
    assert "rate_limit_error" in report["calls"][0]["error"]


def test_openai_errors_reach_the_sdk_as_openai_errors(inspector_server):
    client = openai.OpenAI(
        api_key=OPENAI_SECRET, base_url=f"{inspector_server.base}/proxy/openai/v1", max_retries=0
    )
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(
            model="error-429", messages=[{"role": "user", "content": "x"}]
        )
    assert json.loads(caught.value.response.content)["error"]["code"] == "rate_limit_exceeded"


def test_the_session_page_leads_to_the_sessions_trace(inspector_server):
    import urllib.request

    waiting = urllib.request.urlopen(f"{inspector_server.base}/proxy/s/never-used/", timeout=10)
    assert b"No call has been proxied" in waiting.read()
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:sdk-anthropic")
    with urllib.request.urlopen(
        f"{inspector_server.base}/proxy/s/sdk-anthropic/", timeout=10
    ) as page:
        assert page.url.endswith(f"/traces/{trace_id}/")
