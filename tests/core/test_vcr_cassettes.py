"""VCR cassettes in every shape, and the HTTP traffic in them that is not a model call.

Bodies: `parsed_body` structures, JSON strings, gzip/deflate or plain `!!binary` bytes,
chunked SSE strings. Traffic: SDK telemetry, token requests and other posts are kept as
`other_traffic`, never counted as model calls or API errors.
"""

from __future__ import annotations

import gzip
import zlib

import orjson
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.eventstream import stream
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.formats.http_traffic import TrafficReader
from traces.core.reading.http_body import aws_event_stream, decode_body
from traces.core.reading.limits import InputRejected, Limits
from traces.core.reading.sources import read_source

CHAT = "https://api.openai.com/v1/chat/completions"
QUESTION = {"role": "user", "content": "weather in Oslo?"}
TOOL_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
}


def _completion(message: dict, finish: str = "stop") -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def _interaction(url: str, request_body, response_body, *, status=200, headers=None, parsed=False):
    request = {"headers": {}, "method": "POST", "uri": url}
    request["parsed_body" if parsed else "body"] = (
        request_body if parsed else orjson.dumps(request_body).decode()
    )
    response = {"headers": headers or {}, "status": {"code": status, "message": ""}}
    if parsed:
        response["parsed_body"] = response_body
    else:
        response["body"] = {"string": response_body}
    return {"request": request, "response": response}


class _NoAliases(yaml.SafeDumper):
    """Cassettes are read with aliases refused, so none are written."""

    def ignore_aliases(self, data) -> bool:
        return True


def _cassette(*interactions) -> bytes:
    document = {"interactions": list(interactions), "version": 1}
    return yaml.dump(document, Dumper=_NoAliases).encode()


def _read(data: bytes, **kwargs):
    return analyze_bytes(data, filename="cassette.yaml", **kwargs)


FIRST = {"model": "gpt-4o", "messages": [QUESTION]}
SECOND = {
    "model": "gpt-4o",
    "messages": [
        QUESTION,
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "4°C"},
    ],
}
ASKS = _completion({"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]}, "tool_calls")
ANSWERS = _completion({"role": "assistant", "content": "4°C in Oslo."})


# -- body shapes ------------------------------------------------------------------------
def test_parsed_body_on_both_sides_is_read_as_json():
    trace = _read(
        _cassette(
            _interaction(CHAT, FIRST, ASKS, parsed=True),
            _interaction(CHAT, SECOND, ANSWERS, parsed=True),
        )
    )
    assert [c.status for c in trace.calls] == ["ok", "ok"]
    (run,) = trace.tool_runs
    assert (run.status, run.result_text) == ("paired", "4°C")


@pytest.mark.parametrize(
    ("encoding", "packed"),
    [
        ("gzip", gzip.compress),
        (None, gzip.compress),  # no header: the gzip magic number says it
        ("deflate", zlib.compress),
        (None, lambda data: data),  # base64 !!binary of plain JSON
    ],
)
def test_binary_bodies_are_decoded(encoding, packed):
    headers = {"Content-Encoding": [encoding]} if encoding else {}
    body = packed(orjson.dumps(ASKS))
    assert isinstance(body, bytes)  # yaml writes bytes as !!binary
    data = _cassette(_interaction(CHAT, FIRST, body, headers=headers))
    assert b"!!binary" in data
    (call,) = _read(data).calls
    assert call.status == "ok" and call.response.tool_uses[0].tool_id == "call_1"


def test_binary_header_values_read_as_text():
    interaction = _interaction(CHAT, FIRST, ASKS, parsed=True)
    interaction["request"]["headers"] = {"content-type": [b"application/json"]}
    (record,) = read_source(_cassette(interaction), "c.yaml").items
    assert record.value["request"]["headers"] == {"content-type": ["application/json"]}


def test_a_compressed_body_over_the_limit_is_refused_clearly():
    bomb = gzip.compress(b"{" + b" " * 300_000 + b"}")
    data = _cassette(_interaction(CHAT, FIRST, bomb, headers={"Content-Encoding": ["gzip"]}))
    with pytest.raises(InputRejected, match="decompresses to more than 100,000 bytes"):
        _read(data, limits=Limits(max_decompressed_bytes=100_000))


def test_bytes_that_are_not_text_fail_that_call_and_say_why():
    labelled = _interaction(CHAT, FIRST, b"not gzip at all", headers={"Content-Encoding": ["gzip"]})
    binary = _interaction(CHAT, SECOND, b"\xff\xfe\x00\x81")
    trace = _read(_cassette(labelled, binary))
    first, second = trace.calls
    assert first.status == "error"  # kept as the text it is: not a completion
    assert second.status == "error"
    assert second.response_raw.startswith("[binary body, 4 bytes, not text")


@pytest.mark.corpus
def test_chunked_sse_strings_beside_parsed_bodies(corpus):
    path = corpus / "vcr_parsed_body" / "pydantic-ai_test_complex_agent_run.yaml"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert [c.extra.get("streamed") for c in trace.calls] == [True, True, True]
    assert [b.tool_call_ids for b in trace.batches] == [trace.calls[0].tool_call_ids]
    assert [r.name for r in trace.tool_runs if r.status == "dangling"] == ["final_result"]


@pytest.mark.corpus
def test_a_pydantic_ai_retry_prompt_is_an_error_result(corpus):
    path = corpus / "vcr_parsed_body" / "pydantic-ai_test_temporal_agent_with_model_retry.yaml"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    retried, answered = trace.tool_runs
    assert retried.is_error and retried.result_text.endswith("Fix the errors and try again.")
    assert not answered.is_error


# -- several conversations, and traffic that is not a model call ------------------------
@pytest.mark.corpus
def test_two_runs_in_one_cassette_are_two_loops_and_ingest_posts_are_kept(corpus):
    name = "openllmetry_openai-agents_test_tool_call_and_result_attributes.yaml"
    trace = analyze_bytes((corpus / "vcr_gzip_binary" / name).read_bytes(), filename=name)
    assert [loop.calls for loop in trace.loops] == [(1, 2), (3, 4)]
    assert all(c.status == "ok" for c in trace.calls)  # gzip bodies decoded
    (ingest,) = trace.other_traffic
    assert (ingest.kind, ingest.status, ingest.line) == ("telemetry", 204, 2)
    report = build_report(trace)
    assert report["totals"]["failed_calls"] == 0
    assert report["other_traffic"][0]["summary"] == "POST api.openai.com/v1/traces/ingest → 204"


@pytest.mark.corpus
def test_agno_team_telemetry_is_traffic_and_members_are_their_own_loops(corpus):
    name = "openllmetry_agno_test_team_discussion.yaml"
    trace = analyze_bytes((corpus / "vcr_gzip_binary" / name).read_bytes(), filename=name)
    assert len(trace.calls) == 4 and len(trace.loops) == 3
    assert [t.kind for t in trace.other_traffic] == ["telemetry"] * 3
    assert {t.url for t in trace.other_traffic} == {"https://os-api.agno.com/telemetry/runs"}


def test_token_requests_and_unknown_posts_are_traffic_but_a_failing_model_call_is_not():
    token = {
        "request": {"body": "grant_type=client_credentials", "headers": {}, "method": "POST"},
        "response": {"body": {"string": '{"access_token": "x"}'}, "status": {"code": 200}},
    }
    token["request"]["uri"] = "https://login.example.com/oauth2/v2.0/token"
    health = _interaction("https://api.example.com/health", {"ping": 1}, '{"ok": true}')
    broken = _interaction(CHAT, FIRST, "<html>Bad gateway</html>", status=502)
    trace = _read(_cassette(token, _interaction(CHAT, FIRST, ASKS, parsed=True), health, broken))
    assert [(t.kind, t.line) for t in trace.other_traffic] == [("auth", 1), ("other", 3)]
    assert [c.status for c in trace.calls] == ["ok", "error"]
    assert trace.calls[1].error == "HTTP 502"


def test_the_classifier_names_each_kind():
    reader = TrafficReader(lambda url, body: "/chat/completions" in url)

    def kind(url: str, body=None):
        found = reader.read(1, {"request": {"url": url, "method": "POST", "body": body}})
        return found.kind if found else None

    assert kind("https://collector:4318/v1/traces") == "telemetry"
    assert kind("https://cloud.langfuse.com/api/public/ingestion") == "telemetry"
    assert kind("https://sts.amazonaws.com/") == "auth"
    assert kind("https://oauth2.googleapis.com/token") == "auth"
    assert kind("https://mcp.example/mcp", {"jsonrpc": "2.0", "method": "ping", "id": 1}) == "mcp"
    assert kind("https://x/files") == "other"
    assert kind(CHAT) is None
    assert reader.read(1, {"request": {"body": {}}}) is None  # no URL: not HTTP traffic
    masked = reader.read(1, {"request": {"url": "https://x/v1/traces?key=AIzaSECRET"}})
    assert masked.url == "https://x/v1/traces?key=[masked]"


def test_yaml_only_values_in_parsed_bodies_become_json():
    interaction = _interaction(CHAT, FIRST, ASKS, parsed=True)
    interaction["request"]["parsed_body"]["metadata"] = {"day": "2025-06-01", "blob": b"\x00\xff"}
    data = _cassette(interaction).replace(b"day: '2025-06-01'", b"day: 2025-06-01")
    assert b"day: 2025-06-01\n" in data  # a YAML date, not a string
    (record,) = read_source(data, "c.yaml").items
    metadata = record.value["request"]["body"]["metadata"]
    assert metadata == {"day": "2025-06-01", "blob": "AP8="}
    orjson.dumps(record.value)  # storable


def test_anthropic_cassettes_keep_token_counting_and_telemetry_apart():
    messages = "https://api.anthropic.com/v1/messages"
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [QUESTION]}
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "4°C"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 3},
    }
    trace = _read(
        _cassette(
            _interaction(messages + "/count_tokens", body, {"input_tokens": 10}, parsed=True),
            _interaction(messages, body, reply, parsed=True),
            _interaction("https://statsig.anthropic.com/v1/rgstr", {"events": []}, "{}"),
        )
    )
    assert trace.format == "anthropic-messages" and len(trace.calls) == 1
    assert [t.kind for t in trace.other_traffic] == ["other", "other"]
    assert trace.other_traffic[0].summary == "POST api.anthropic.com/v1/messages/count_tokens → 200"


def test_two_runs_gzip_and_telemetry_report_matches_golden():
    """Gzip `!!binary` responses, a `parsed_body` request, a token request and two
    traces/ingest posts, and one agent run recorded twice: two loops, four calls."""
    trace = _read(golden_input("vcr/two_runs_gzip_telemetry.yaml"))
    assert trace.format == "openai-responses"
    assert [loop.calls for loop in trace.loops] == [(1, 2), (3, 4)]
    assert [t.kind for t in trace.other_traffic] == ["auth", "telemetry", "telemetry"]
    assert [r.status for r in trace.tool_runs] == ["paired", "paired"]
    assert_golden("vcr/two_runs_gzip_telemetry.report.json", build_report(trace))


@settings(max_examples=80, deadline=None)
@given(
    data=st.binary(max_size=300),
    content_type=st.sampled_from(["", "application/vnd.amazon.eventstream", "application/json"]),
    encoding=st.sampled_from(["", "gzip", "deflate"]),
)
def test_any_recorded_bytes_decode_to_json_or_text_without_raising(data, content_type, encoding):
    headers = {"Content-Type": [content_type], "Content-Encoding": [encoding]}
    decoded = decode_body(data, headers)
    assert isinstance(decoded, (str, list, dict, int, float, bool, type(None)))
    orjson.dumps(decoded)  # storable as JSON


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=400))
def test_an_event_stream_cut_anywhere_keeps_the_whole_frames_before_the_cut(cut):
    body = stream(
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
        ("messageStop", {"stopReason": "end_turn"}),
    )
    frames = aws_event_stream(body[:cut])
    whole = [f for f in frames or [] if "payload" in f]
    assert len(whole) <= 3
    if cut >= len(body):
        assert len(whole) == 3 and frames[-1].get("truncated") is None
