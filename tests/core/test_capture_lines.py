"""The proxy's recorded line: no credential in it, and the adapters read it back."""

from __future__ import annotations

import orjson
import pytest
import zstandard

from traces.core.analysis.ingest import analyze_bytes
from traces.core.reading.capture import CapturedExchange, recorded_format, safe_url, upstream_url


def test_the_upstream_host_never_comes_from_the_path():
    base = "https://api.anthropic.com"
    assert upstream_url(base, "v1/messages", "beta=true") == f"{base}/v1/messages?beta=true"
    assert upstream_url(base, "../../evil.example/v1", "") == f"{base}/evil.example/v1"
    assert upstream_url(base, "//evil.example/x", "") == f"{base}/evil.example/x"
    assert upstream_url(base, "v1/@evil.example", "") == f"{base}/v1/@evil.example"


@pytest.mark.parametrize(
    ("path", "query", "expected"),
    [
        ("v1/\x00messages", "", "/v1/%00messages"),
        ("v1/mess\nages", "", "/v1/mess%0Aages"),
        ("v1/messages?key=x", "", "/v1/messages%3Fkey=x"),
        ("v1/m\u00e9ssages", "", "/v1/m%C3%A9ssages"),
        (
            "v1beta/models/gemini-2.5-pro:generateContent",
            "alt=sse",
            "/v1beta/models/gemini-2.5-pro:generateContent?alt=sse",
        ),
        ("v1/messages", "a=%00&b=c d&e=\u00ff", "/v1/messages?a=%00&b=c%20d&e=%C3%BF"),
        ("v1/messages", "raw=\udcff", "/v1/messages?raw=%FF"),  # a byte not UTF-8, kept
    ],
)
def test_the_path_reaches_the_upstream_as_the_client_escaped_it(path, query, expected):
    """The path arrives decoded: escaped again, a control character or `?` the client
    sent as `%00`, `%0A` or `%3F` stays one, and the HTTP client never refuses the URL."""
    base = "https://api.example.com"
    assert upstream_url(base, path, query) == base + expected


@pytest.mark.parametrize(
    ("vendor", "path", "expected"),
    [
        ("anthropic", "v1/messages", "anthropic-messages"),
        ("anthropic", "v1/messages/count_tokens", None),
        ("anthropic", "v1/models", None),
        ("openai", "chat/completions", "openai-chat"),
        ("openai", "responses", "openai-responses"),
        ("openai", "embeddings", None),
    ],
)
def test_only_model_calls_are_recorded(vendor, path, expected):
    assert recorded_format(vendor, path) == expected


def test_secret_query_parameters_are_masked():
    assert "sekrit" not in safe_url("https://x.example/v1/messages?key=sekrit&beta=true")
    assert "beta=true" in safe_url("https://x.example/v1/messages?key=sekrit&beta=true")


def test_query_signed_aws_credentials_are_masked():
    """A presigned / query-signed SigV4 URL carries its credential in the query."""
    url = safe_url(
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse?"
        "X-Amz-Security-Token=SESSIONTOKEN&X-Amz-Signature=abcdef0123&"
        "X-Amz-Credential=AKIAEXAMPLE%2F20260101&X-Amz-Date=20260101T000000Z"
    )
    for secret in ("SESSIONTOKEN", "abcdef0123", "AKIAEXAMPLE"):
        assert secret not in url
    assert "X-Amz-Date=20260101T000000Z" in url


def test_a_stream_cut_inside_a_character_is_kept_as_text_and_still_read():
    """Only AWS event frames are kept as base64: an SSE stream the client left in the
    middle of a multi-byte character stays text (redactable, readable)."""
    start = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
        b'"type":"message","role":"assistant","model":"claude-x","content":[],'
        b'"usage":{"input_tokens":12,"output_tokens":1}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"'
    )
    exchange = CapturedExchange(
        "POST",
        "https://api.anthropic.com/v1/messages",
        {"X-Api-Key": "sk-ant-secret"},
        orjson.dumps({"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]}),
        1.0,
        status=200,
        response_headers={"content-type": "text/event-stream"},
        response_body=start + "日".encode()[:2],
        streamed=True,
        interrupted=True,
        problem="the client disconnected mid-response",
    )
    recorded = orjson.loads(exchange.line())["response"]
    assert "body_base64" not in recorded and "message_start" in recorded["body_raw"]
    (call,) = analyze_bytes(exchange.line() + b"\n").calls
    assert call.usage.input_tokens == 12


def test_a_recorded_stream_reads_back_as_a_call_without_the_credential():
    stream = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
        b'"type":"message","role":"assistant","model":"claude-x","content":[],'
        b'"usage":{"input_tokens":12,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": \\".\\"}"}}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
        b'"tool_use"},"usage":{"output_tokens":9}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    exchange = CapturedExchange(
        "POST",
        "https://api.anthropic.com/v1/messages",
        {"X-Api-Key": "sk-ant-secret", "Content-Type": "application/json"},
        orjson.dumps({"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]}),
        1.0,
        status=200,
        response_headers={"content-type": "text/event-stream"},
        response_body=stream,
        ended_at=2.0,
        streamed=True,
    )
    line = exchange.line()
    assert b"sk-ant-secret" not in line
    trace = analyze_bytes(line + b"\n")
    assert trace.format == "anthropic-messages"
    (call,) = trace.calls
    assert (call.stop_reason, call.usage.output_tokens) == ("tool_use", 9)
    assert call.tool_call_ids == ("toolu_1",)


def test_an_interrupted_exchange_is_a_failed_call_marked_interrupted():
    exchange = CapturedExchange(
        "POST",
        "https://api.openai.com/v1/chat/completions",
        {"Authorization": "Bearer sk-secret"},
        b'{"model":"gpt-x","messages":[{"role":"user","content":"hi"}],"stream":true}',
        1.0,
        status=200,
        response_headers={"content-type": "text/event-stream"},
        response_body=b'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n',
        streamed=True,
        interrupted=True,
        problem="the client disconnected mid-response",
    )
    trace = analyze_bytes(exchange.line() + b"\n")
    (call,) = trace.calls
    assert call.status == "error"
    assert call.extra["interrupted"] == "the client disconnected mid-response"


def codex_request(body: bytes, encoding: str) -> CapturedExchange:
    return CapturedExchange(
        "POST",
        "https://api.openai.com/v1/responses",
        {"Authorization": "Bearer sk-secret", "Content-Encoding": encoding},
        body,
        1.0,
        status=200,
        response_headers={"content-type": "application/json"},
        response_body=orjson.dumps(
            {
                "id": "resp_1",
                "object": "response",
                "model": "gpt-5",
                "status": "completed",
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "Hello."}],
                    }
                ],
                "usage": {"input_tokens": 11, "output_tokens": 3},
            }
        ),
        ended_at=2.0,
    )


REQUEST = {"model": "gpt-5", "input": [{"role": "user", "content": "Say hello."}]}


def test_a_zstd_request_as_the_codex_cli_sends_it_is_recorded_decoded():
    """The bytes go upstream compressed; the line holds the JSON, and the call reads back
    with its request."""
    body = zstandard.ZstdCompressor(level=3).compress(orjson.dumps(REQUEST))
    line = orjson.loads(codex_request(body, "zstd").line())
    assert line["request"]["body"] == REQUEST
    assert "body_not_decoded" not in line["request"]
    trace = analyze_bytes(orjson.dumps(line) + b"\n")
    (call,) = trace.calls
    assert call.request_recorded
    assert call.message_count == 1
    assert call.model == "gpt-5"


def test_a_body_that_cannot_be_decoded_is_recorded_as_not_decoded_not_as_garbage():
    line = orjson.loads(codex_request(b"\x1b\x07\x00\xfe binary", "br").line())
    assert line["request"]["body"] is None
    assert "'br' is not supported" in line["request"]["body_not_decoded"]
    assert "went on as they were sent" in line["request"]["body_not_decoded"]
