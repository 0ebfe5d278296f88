"""The real google-genai SDK pointed at the proxy's Gemini route on a live daphne, in front
of a stand-in of the Gemini API replaying a recorded cassette: the SDK gets the upstream's
answers, the trace shows the calls, the function calls paired with their responses, the
usage and the stop reasons; countTokens passes through unrecorded; the key goes on and is
never recorded."""

from __future__ import annotations

import json

import httpx
import pytest
from google import genai
from google.genai import errors, types

from tests.capture.gemini_script import GEMINI_SECRET, TOOL

pytestmark = pytest.mark.corpus

MODEL = "gemini-3-pro-preview"
QUESTION = "What is the capital of the user country? Call the tool"
TOOLS = [
    types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name=TOOL,
                description="The user's country",
                parameters_json_schema={"type": "object", "properties": {}},
            )
        ]
    )
]


def gemini_client(inspector_server, base: str, **headers: str) -> genai.Client:
    return genai.Client(
        api_key=GEMINI_SECRET,
        http_options=types.HttpOptions(
            base_url=f"{inspector_server.base}{base}",
            headers=headers or None,
            retry_options=types.HttpRetryOptions(attempts=1),
        ),
    )


def config() -> types.GenerateContentConfig:
    return types.GenerateContentConfig(
        tools=TOOLS,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


def answered(first: types.GenerateContentResponse) -> list[types.Content]:
    """The agent's side of the loop: the model's turn and one response per call."""
    calls = first.function_calls or []
    assert [c.name for c in calls] == [TOOL]
    return [
        types.Content(role="user", parts=[types.Part.from_text(text=QUESTION)]),
        first.candidates[0].content,
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(name=c.name, response={"country": "Mexico"})
                for c in calls
            ],
        ),
    ]


def test_genai_sdk_function_calling_loop_not_streamed(inspector_server, upstream):
    client = gemini_client(inspector_server, "/proxy/s/genai/gemini")
    first = client.models.generate_content(model=MODEL, contents=QUESTION, config=config())
    assert first.function_calls[0].name == TOOL
    final = client.models.generate_content(model=MODEL, contents=answered(first), config=config())
    assert final.text == "The capital of Mexico is Mexico City."
    forwarded = upstream.received[-1]
    # The SDK adds its API version (v1 when given a base URL, v1beta by default).
    assert forwarded.path.endswith(f"/models/{MODEL}:generateContent")
    assert forwarded.headers.get("X-Goog-Api-Key") == GEMINI_SECRET  # forwarded as sent

    trace_id = inspector_server.trace_id("proxy:gemini:genai")
    report = inspector_server.wait_report(trace_id, calls=2)
    assert report["format"] == "gemini"
    calls = report["calls"]
    assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn"]
    assert [c["status"] for c in calls] == ["ok", "ok"]
    assert calls[0]["input_tokens"] == 29 and calls[1]["input_tokens"] == 257
    assert calls[0]["output_tokens"] > 0
    runs = report["tool_runs"]
    assert [(r["name"], r["status"]) for r in runs] == [(TOOL, "paired")]
    assert len(report["loops"]) == 1


def test_genai_sdk_streams_over_sse_and_the_loop_is_read(inspector_server, upstream):
    client = gemini_client(
        inspector_server, "/proxy/gemini", **{"X-Loop-Inspector-Session": "genai-sse"}
    )
    chunks = list(
        client.models.generate_content_stream(model=MODEL, contents=QUESTION, config=config())
    )
    assert upstream.received[-1].path.endswith(":streamGenerateContent?alt=sse")
    assert any(c.function_calls for c in chunks)
    first = next(c for c in chunks if c.function_calls)
    texts = [
        c.text
        for c in client.models.generate_content_stream(
            model=MODEL, contents=answered(first), config=config()
        )
        if c.text
    ]
    assert "".join(texts) == "The capital of Mexico is Mexico City."

    trace_id = inspector_server.trace_id("proxy:gemini:genai-sse")
    report = inspector_server.wait_report(trace_id, calls=2)
    calls = report["calls"]
    assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn"]
    assert calls[1]["input_tokens"] == 257  # the last chunk's usage
    assert [r["status"] for r in report["tool_runs"]] == ["paired"]


def test_the_json_array_stream_goes_through_chunk_by_chunk_and_is_read(inspector_server, upstream):
    """Without `alt=sse` Gemini streams one JSON array, element by element."""
    url = f"{inspector_server.base}/proxy/s/genai-array/gemini/v1beta/models/{MODEL}"
    body = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}]}
    with httpx.stream(
        "POST",
        f"{url}:streamGenerateContent?key={GEMINI_SECRET}",
        json=body,
        timeout=30,
    ) as reply:
        assert reply.status_code == 200
        pieces = list(reply.iter_raw())
    received = b"".join(pieces)
    assert received == upstream.sent[-1]
    assert len(json.loads(received)) == 2
    assert upstream.received[-1].path.endswith(f"?key={GEMINI_SECRET}")  # forwarded

    trace_id = inspector_server.trace_id("proxy:gemini:genai-array")
    report = inspector_server.wait_report(trace_id, calls=1)
    assert report["calls"][0]["stop_reason"] == "tool_use"
    assert report["calls"][0]["input_tokens"] == 29


def test_count_tokens_passes_through_unrecorded(inspector_server, upstream):
    client = gemini_client(inspector_server, "/proxy/s/genai-count/gemini")
    counted = client.models.count_tokens(model=MODEL, contents=QUESTION)
    assert counted.total_tokens == 29
    assert upstream.received[-1].path.endswith(f"/models/{MODEL}:countTokens")
    assert not inspector_server.rows(
        "SELECT id FROM traces_trace WHERE capture_key LIKE ?", "proxy:%:genai-count"
    )


def test_an_upstream_error_reaches_the_sdk_and_is_a_failed_call(inspector_server, upstream):
    client = gemini_client(inspector_server, "/proxy/s/genai-errors/gemini")
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model="error-429", contents="hi")
    assert caught.value.code == 429
    assert caught.value.status == "RESOURCE_EXHAUSTED"
    assert caught.value.response.content == upstream.sent[-1]
    trace_id = inspector_server.trace_id("proxy:gemini:genai-errors")
    report = inspector_server.wait_report(trace_id, calls=1)
    assert [(c["status"], c["http_status"]) for c in report["calls"]] == [("error", 429)]


def test_a_stream_the_upstream_breaks_off_raises_in_the_sdk(inspector_server, upstream):
    """The proxy ends the stream with an error event in Gemini's shape, which the SDK
    raises on, and records a failed call."""
    client = gemini_client(inspector_server, "/proxy/s/genai-cut/gemini")
    received = []
    with pytest.raises(errors.ServerError) as caught:
        for chunk in client.models.generate_content_stream(model="cut", contents=QUESTION):
            received.append(chunk)
    assert len(received) == 1  # the event sent before the cut reached the SDK
    assert caught.value.code == 502 and caught.value.status == "UNAVAILABLE"
    assert "Loop Inspector proxy: the upstream connection failed" in caught.value.message
    trace_id = inspector_server.trace_id("proxy:gemini:genai-cut")
    report = inspector_server.wait_report(trace_id, calls=1)
    assert report["calls"][0]["status"] == "error"


def test_the_proxys_own_errors_reach_the_sdk_in_the_gemini_shape(inspector_server):
    client = gemini_client(inspector_server, "/proxy/s/bad name/gemini")
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model=MODEL, contents="hi")
    assert caught.value.code == 400
    assert caught.value.status == "INVALID_ARGUMENT"
    assert "session name" in caught.value.message
