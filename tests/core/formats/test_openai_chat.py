"""The OpenAI Chat Completions adapter: corpus cassettes, a golden loop, streams, bad input."""

from __future__ import annotations

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.model import Message
from traces.core.outputs.report import build_report
from traces.core.reading.dialects import openai_chat as chat

FOLDER = "openai_chat_completions_api"


def _corpus(corpus, name: str):
    path = corpus / FOLDER / name
    return analyze_bytes(path.read_bytes(), filename=path.name)


def _jsonl(*records) -> bytes:
    return b"\n".join(orjson.dumps(r) for r in records) + b"\n"


def _completion(message: dict, finish: str = "stop", usage: dict | None = None) -> dict:
    return {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 1760000000,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
    }


# -- corpus -----------------------------------------------------------------------------
# Counts verified by reading each cassette: interactions, `tool_calls` in responses,
# `role:"tool"` messages in the next request, `finish_reason` and `usage` fields.
@pytest.mark.corpus
def test_tool_calls_with_content_pairs_both_results(corpus):
    trace = _corpus(corpus, "test_chat_completion_tool_calls_with_content.yaml")
    report = build_report(trace)
    assert trace.format == "openai-chat"
    assert [c.stop_reason for c in trace.calls] == ["tool_use", "end_turn"]
    assert [c.extra["finish_reason"] for c in trace.calls] == ["tool_calls", "stop"]
    assert report["totals"] | {"buckets": None, "cost_usd": None} == {
        "buckets": None,
        "cost_usd": None,
        "calls": 2,
        "failed_calls": 0,
        "loops": 1,
        "tool_runs": 2,
        "input_tokens": 75 + 99,
        "output_tokens": 51 + 25,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
    }
    assert [(r.id, r.call, r.result_call, r.status) for r in trace.tool_runs] == [
        ("call_JpNb8OiAkbIbHzDggfpdDHpi", 1, 2, "paired"),
        ("call_vaFQc3zK6hHTRZKXRI5Eo2cJ", 1, 2, "paired"),
    ]
    assert trace.tool_runs[0].input == {"location": "Seattle, WA"}
    assert trace.tool_runs[1].result_text == "70 degrees and sunny"
    assert [b.tool_call_ids for b in trace.batches] == [
        ("call_JpNb8OiAkbIbHzDggfpdDHpi", "call_vaFQc3zK6hHTRZKXRI5Eo2cJ")
    ]
    second = trace.calls[1]
    assert second.extends_previous and second.prefix_len == 2 and len(second.appended) == 3
    assert trace.calls[0].system == "You're a helpful assistant."
    assert trace.calls[0].model == "gpt-4o-mini-2024-07-18"
    assert trace.calls[0].extra["http_request"]["headers"]["authorization"] == "[masked]"
    assert report["outcome"]["kind"] == "finished"


@pytest.mark.corpus
def test_streamed_parallel_tool_calls_are_reassembled(corpus):
    trace = _corpus(corpus, "test_chat_completion_multiple_tools_streaming_with_content.yaml")
    (call,) = trace.calls
    assert call.status == "ok" and call.extra["streamed"] is True
    assert call.stop_reason == "tool_use"
    uses = call.response.tool_uses
    # id and name arrive once per index; the arguments in 7 and 8 fragments.
    assert [(b.tool_id, b.name, b.input) for b in uses] == [
        ("call_fHCjJqt9Pysde6vcJcvbXGBx", "get_current_weather", {"location": "Seattle, WA"}),
        ("call_3J9foSw3CUb48lrqIXoTky6U", "get_current_weather", {"location": "San Francisco, CA"}),
    ]
    # Usage comes from the last chunk, whose `choices` is empty.
    assert (call.usage.input_tokens, call.usage.output_tokens) == (75, 51)
    assert [r.status for r in trace.tool_runs] == ["dangling", "dangling"]
    assert build_report(trace)["outcome"]["kind"] == "halted_on_tool_use"


@pytest.mark.corpus
def test_stream_without_usage_is_complete_text(corpus):
    # The upstream test stops reading early, but the cassette holds the whole stream:
    # a finish_reason "stop" chunk and `[DONE]`; no usage (include_usage was not set).
    trace = _corpus(corpus, "test_chat_completion_streaming_not_complete.yaml")
    (call,) = trace.calls
    assert call.status == "ok" and call.stop_reason == "end_turn"
    assert [b.text for b in call.response.blocks] == ["This is a test."]
    assert call.usage is None
    assert call.model == "gpt-4-0613"
    assert trace.tool_runs == ()


@pytest.mark.corpus
def test_every_corpus_file_detects_as_chat(corpus):
    for path in sorted((corpus / FOLDER).iterdir()):
        trace = analyze_bytes(path.read_bytes(), filename=path.name)
        assert trace.format == "openai-chat", path.name
        assert "Chat Completions endpoint" in trace.detection_reason
        assert trace.line_errors == ()


# -- golden -----------------------------------------------------------------------------
def test_agent_loop_report_matches_golden():
    """Tool loop, parallel calls with malformed arguments, a 429 and its retry, a side call."""
    trace = analyze_bytes(golden_input("openai-chat/agent_loop.jsonl"))
    assert trace.calls[1].response.tool_uses[1].input == '{"path": "src/'
    assert trace.calls[2].extra["http_request"]["headers"]["Authorization"] == "[masked]"
    assert_golden("openai-chat/agent_loop.report.json", build_report(trace))


# -- dialect ----------------------------------------------------------------------------
def test_usage_subtracts_cached_prompt_tokens():
    usage = chat.usage_from(
        {
            "prompt_tokens": 1000,
            "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 768},
        }
    )
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (232, 768, 7)
    assert usage.total_input_tokens == 1000
    assert chat.usage_from(None) is None


def test_forced_tool_choice_stop_with_tool_calls_is_tool_use():
    body = _completion(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
            ],
        },
        finish="stop",
    )
    message, stop, usage = chat.read_response(body)
    assert stop == "tool_use" and usage is None
    assert message.tool_uses[0].input == {}


def test_length_cut_tool_call_stays_max_tokens():
    body = _completion(
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a'}}
            ],
        },
        finish="length",
    )
    message, stop, _usage = chat.read_response(body)
    assert stop == "max_tokens" and message.tool_uses[0].input == '{"a'


def test_tool_message_becomes_tool_result_with_id_as_written():
    message = chat.normalize_message({"role": "tool", "tool_call_id": " call_1", "content": "ok"})
    assert message == Message("tool", message.blocks)
    (block,) = message.blocks
    assert (block.kind, block.tool_id, block.text) == ("tool_result", " call_1", "ok")


def test_completion_body_normalises_as_its_first_choice():
    body = _completion({"role": "assistant", "content": "hi", "reasoning_content": "think"})
    message = chat.normalize_message({"role": "assistant", **body})
    assert [(b.kind, b.text) for b in message.blocks] == [("thinking", "think"), ("text", "hi")]


def test_cut_short_stream_is_a_failed_call_that_keeps_its_text():
    stream = (
        'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":'
        '[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}\n\n'
        'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":'
        '[{"index":0,"delta":{"content":"lo"}}]}\n\n'
    )
    record = {
        "request": {"url": "https://x/v1/chat/completions", "body": {"messages": []}},
        "response": {"status_code": 200, "headers": {}, "body": None, "body_raw": stream},
    }
    (call,) = analyze_bytes(_jsonl(record)).calls
    assert call.status == "error" and "cut short" in call.error
    assert call.response.blocks[0].text == "Hello"


def test_error_chunk_in_stream_fails_the_call():
    stream = (
        'data: {"id":"c1","object":"chat.completion.chunk","choices":'
        '[{"index":0,"delta":{"content":"x"}}]}\n\n'
        'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n'
    )
    body, error = chat.assemble_stream(stream)
    assert body is not None and error == "server_error: overloaded"


def test_chunks_logged_one_per_line_form_one_response():
    chunk = {"object": "chat.completion.chunk", "model": "m", "created": 1760000000}
    records = [
        {**chunk, "id": "a", "choices": [{"index": 0, "delta": {"content": "Hi"}}]},
        {**chunk, "id": "a", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**chunk, "id": "b", "choices": [{"index": 0, "delta": {"content": "Yo"}}]},
    ]
    trace = analyze_bytes(_jsonl(*records))
    assert [c.line for c in trace.calls] == [1, 3]
    first, second = trace.calls
    assert first.request_recorded is False and first.stop_reason == "end_turn"
    assert first.response.blocks[0].text == "Hi" and first.status == "ok"
    assert second.status == "error"  # no finish_reason and no [DONE]: cut short


def test_response_missing_is_a_failed_call():
    record = {"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}}
    (call,) = analyze_bytes(_jsonl(record), format_name="openai-chat").calls
    assert call.status == "error" and "no response" in call.error
    assert call.response is None and call.model == "gpt-4o"


def test_error_body_without_http_status_fails_the_call():
    record = {
        "request": {"messages": [{"role": "system", "content": "s"}]},
        "response": {"error": {"message": "Invalid 'messages'", "code": "invalid_value"}},
    }
    (call,) = analyze_bytes(_jsonl(record)).calls
    assert call.status == "error"
    assert call.error == "invalid_value: Invalid 'messages'"
    assert call.response_raw == record["response"]


# -- detection --------------------------------------------------------------------------
def test_bare_body_pair_is_chat_not_anthropic():
    record = {
        "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        "response": _completion({"role": "assistant", "content": "hello"}),
    }
    trace = analyze_bytes(_jsonl(record))
    assert trace.format == "openai-chat"
    assert "choices" in trace.detection_reason


def test_anthropic_pair_is_not_claimed():
    record = {
        "request": {"model": "claude", "messages": [{"role": "user", "content": "hi"}]},
        "response": {"type": "message", "role": "assistant", "content": []},
    }
    assert analyze_bytes(_jsonl(record)).format == "anthropic-messages"


# -- malformed input --------------------------------------------------------------------
def test_bad_lines_become_line_errors_and_the_rest_ingests():
    good = {
        "request": {"messages": [{"role": "user", "content": "hi"}]},
        "response": _completion({"role": "assistant", "content": "hello"}),
    }
    lines = [
        orjson.dumps(good),
        b'{"request": {"messages": [{"role": "us',
        b'{"foo": 1}',
        b'{"request": "hello", "response": {}}',
        b'{"request": {"messages": "not a list"}, "response": null}',
        b"[1, 2]",
        orjson.dumps(good),
    ]
    trace = analyze_bytes(b"\n".join(lines) + b"\n")
    assert trace.format == "openai-chat"
    assert [c.line for c in trace.calls] == [1, 7]
    errors = {e.line: e.message for e in trace.line_errors}
    assert sorted(errors) == [2, 3, 4, 5, 6]
    assert "cut off" in errors[2]
    assert "not a Chat Completions record" in errors[3]
    assert errors[4] == "the request body is not a JSON object"
    assert errors[5] == "request 'messages' is not a list"
    assert "JSON object" in errors[6]
    report = build_report(trace)
    assert report["lines"]["ingested"] == 2 and len(report["lines"]["errors"]) == 5


def test_unparsable_response_body_is_kept_as_failed_text():
    record = {
        "request": {"url": "https://x/v1/chat/completions", "body": {"messages": []}},
        "response": {"status_code": 502, "headers": {}, "body": "<html>Bad gateway</html>"},
    }
    (call,) = analyze_bytes(_jsonl(record)).calls
    assert call.status == "error" and call.http_status == 502 and call.error == "HTTP 502"
    assert call.response_raw == "<html>Bad gateway</html>"
