"""The Bedrock Converse adapter: corpus cassettes, the binary event stream, errors, bad input."""

from __future__ import annotations

import orjson
import pytest
import yaml

from tests.eventstream import frame, stream
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.dialects import bedrock

FOLDER = "bedrock_converse"
URL = "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse"
USER = {"role": "user", "content": [{"text": "go"}]}


def _corpus(corpus, name: str):
    path = corpus / FOLDER / name
    return analyze_bytes(path.read_bytes(), filename=path.name)


def _jsonl(*records) -> bytes:
    return b"\n".join(orjson.dumps(r) for r in records) + b"\n"


class _NoAliases(yaml.SafeDumper):
    """Cassettes are read with aliases refused, so none are written."""

    def ignore_aliases(self, data) -> bool:
        return True


def _cassette(*interactions) -> bytes:
    document = {"interactions": list(interactions), "version": 1}
    return yaml.dump(document, Dumper=_NoAliases).encode()


def _streamed(messages: list, body: bytes) -> dict:
    return {
        "request": {
            "body": orjson.dumps({"messages": messages}).decode(),
            "headers": {},
            "method": "POST",
            "uri": URL.replace("/converse", "/converse-stream"),
        },
        "response": {
            "body": {"string": body},
            "headers": {"Content-Type": ["application/vnd.amazon.eventstream"]},
            "status": {"code": 200, "message": "OK"},
        },
    }


# -- corpus -----------------------------------------------------------------------------
# Figures checked against SOURCES.md §16 and by reading the cassettes (the stream's frames
# were listed with botocore's parser: 25 frames, one contentBlockStart, for the tool use).
@pytest.mark.corpus
def test_converse_stream_frames_are_folded_into_one_response(corpus):
    trace = _corpus(corpus, "openllmetry_test_anthropic_converse_stream_with_tool_use.yaml")
    assert trace.format == "bedrock-converse"
    assert "ConverseStream" in trace.detection_reason
    (call,) = trace.calls
    assert call.status == "ok" and call.extra["streamed"] is True
    assert call.model == "anthropic.claude-3-sonnet-20240229-v1:0"
    text, use = call.response.blocks
    # the text block had no contentBlockStart; its 14 deltas are joined
    assert text.kind == "text" and text.text.startswith("Okay, let me check the weather")
    assert (use.tool_id, use.name, use.input) == (
        "tooluse_yypYDr71TwCwByoyao4-Vg",
        "get_weather",
        {"location": "Barcelona"},
    )
    assert (call.stop_reason, call.usage.input_tokens, call.usage.output_tokens) == (
        "tool_use",
        236,
        58,
    )
    assert [r.status for r in trace.tool_runs] == ["dangling"]


@pytest.mark.corpus
def test_reasoning_tool_use_and_result_pair_by_tool_use_id(corpus):
    trace = _corpus(corpus, "pydantic-ai_test_bedrock_anthropic_tool_with_thinking.yaml")
    first, second = trace.calls
    assert [b.kind for b in first.response.blocks] == ["thinking", "text", "tool_use"]
    assert first.model == "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
    (run,) = trace.tool_runs
    assert (run.id, run.status, run.result_text, run.is_error) == (
        "tooluse_W9DaUFg4Tj2cRPpndqxWSg",
        "paired",
        "Mexico",
        False,
    )
    assert second.extends_previous and second.stop_reason == "end_turn"
    # some request headers were recorded as !!binary: they read as text
    assert first.extra["http_request"]["headers"]["content-type"] == ["application/json"]


@pytest.mark.corpus
def test_a_non_anthropic_model_in_the_same_envelope(corpus):
    trace = _corpus(corpus, "pydantic-ai_test_bedrock_moonshotai_tool_call.yaml")
    assert [c.model for c in trace.calls] == ["moonshot.kimi-k2-thinking"] * 2
    (run,) = trace.tool_runs
    assert (run.id, run.input, run.status) == (
        "functions.get_temperature:0",
        {"city": "London"},
        "paired",
    )


# -- golden -----------------------------------------------------------------------------
def test_parallel_stream_retry_report_matches_golden():
    """Parallel tool uses, a toolResult with status error, a binary ConverseStream with a
    text block that has no start and fragmented tool input, a throttling exception frame,
    its retry, cache reads and writes, and an STS token request kept as other traffic."""
    trace = analyze_bytes(
        golden_input("bedrock-converse/parallel_stream_retry.yaml"), filename="x.yaml"
    )
    assert trace.format == "bedrock-converse"
    assert [c.status for c in trace.calls] == ["ok", "ok", "error", "ok"]
    assert (
        trace.calls[2].error
        == "throttlingException: Too many requests, please wait before trying again."
    )
    assert [(t.kind, t.url) for t in trace.other_traffic] == [
        ("auth", "https://sts.amazonaws.com/")
    ]
    runs = {run.id: run for run in trace.tool_runs}
    assert runs["tooluse_bergen"].is_error and not runs["tooluse_oslo"].is_error
    assert runs["tooluse_oslo"].result_text == '{"city":"Oslo","celsius":4}'
    assert runs["tooluse_bergen_2"].input == {"city": "Bergen"}
    assert trace.calls[0].usage.cache_write_tokens == 1000
    assert trace.calls[0].extra["http_request"]["headers"]["Authorization"] == "[masked]"
    assert_golden("bedrock-converse/parallel_stream_retry.report.json", build_report(trace))


# -- streams ----------------------------------------------------------------------------
def test_a_cut_stream_keeps_what_arrived_and_fails_the_call():
    body = stream(
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Half an ans"}}),
        ("messageStop", {"stopReason": "end_turn"}),
    )
    (call,) = analyze_bytes(_cassette(_streamed([USER], body[:-7])), filename="c.yaml").calls
    assert call.status == "error" and "cut off after frame 2" in call.error
    assert call.response_raw["output"]["message"]["content"] == [{"text": "Half an ans"}]


def test_bytes_that_are_not_an_event_stream_fail_the_call_clearly():
    (call,) = analyze_bytes(
        _cassette(_streamed([USER], b"\x00\x01garbage")), filename="c.yaml"
    ).calls
    assert call.status == "error"


def test_reasoning_deltas_and_boto3_event_lists_are_read():
    events = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"text": "hm"}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"signature": "sig"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "Yes."}}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 5, "outputTokens": 2}}},
    ]
    record = {"request": {"url": URL, "body": {"messages": [USER]}}, "response": events}
    (call,) = analyze_bytes(_jsonl(record)).calls
    assert [(b.kind, b.text) for b in call.response.blocks] == [
        ("thinking", "hm"),
        ("text", "Yes."),
    ]
    assert call.response.blocks[0].raw["reasoningContent"]["reasoningText"]["signature"] == "sig"
    assert call.usage.output_tokens == 2 and call.extra["streamed"] is True


def test_an_exception_frame_fails_the_call_with_its_message():
    body = frame("messageStart", {"role": "assistant"}) + frame(
        "validationException", {"message": "bad input"}, "exception"
    )
    (call,) = analyze_bytes(_cassette(_streamed([USER], body)), filename="c.yaml").calls
    assert (call.status, call.error) == ("error", "validationException: bad input")


# -- dialect ----------------------------------------------------------------------------
def test_usage_reads_both_cache_field_names():
    new = bedrock.usage_from({"inputTokens": 3, "outputTokens": 1, "cacheReadInputTokens": 7})
    old = bedrock.usage_from({"inputTokens": 3, "outputTokens": 1, "cacheReadInputTokenCount": 7})
    assert new == old and new.cache_read_tokens == 7 and new.total_input_tokens == 10


def test_tool_results_flag_errors_by_status_and_render_json_and_images():
    message = bedrock.normalize_message(
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "a", "content": [{"json": {"n": 1}}]}},
                {"toolResult": {"toolUseId": "b", "content": [{"text": "x"}], "status": "error"}},
                {"image": {"format": "png", "source": {"bytes": "…"}}},
                {"cachePoint": {"type": "default"}},
            ],
        }
    )
    first, second = message.tool_results
    assert (first.text, first.is_error, second.is_error) == ('{"n":1}', False, True)
    assert [b.kind for b in message.blocks[2:]] == ["image", "other"]


def test_http_error_bodies_are_failed_calls():
    record = {
        "request": {"url": URL, "body": {"messages": [USER]}},
        "response": {
            "status_code": 400,
            "headers": {},
            "body": {"message": "The model returned the following errors: bad"},
        },
    }
    (call,) = analyze_bytes(_jsonl(record)).calls
    assert call.status == "error" and call.error.startswith("HTTP 400 The model returned")


# -- bad input --------------------------------------------------------------------------
def test_bad_records_become_line_errors_and_the_rest_ingests():
    good = {
        "request": {"url": URL, "body": {"messages": [USER]}},
        "response": {"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}}},
    }
    data = _jsonl(
        good,
        {"request": {"url": URL, "body": "{not json"}, "response": None},
        {"request": {"url": URL, "body": {"messages": {"role": "user"}}}, "response": None},
        {"something": "else"},
    )
    trace = analyze_bytes(data, format_name="bedrock-converse")
    assert len(trace.calls) == 1
    messages = {e.line: e.message for e in trace.line_errors}
    assert messages == {
        2: "the request body is not a JSON object",
        3: "request 'messages' is not a list",
        4: "not a Bedrock Converse record (no 'request', 'response' or output.message)",
    }
