"""The shared request-log reading: one HTTP-record reader, one dialect shape, one adapter.

Every request-log format (Anthropic Messages, OpenAI Chat and Responses, Gemini, Bedrock
Converse) reads its records through `http_record` and `request_log`; these tests pin what
that shared path does, whatever the dialect, and that a dialect is all a new format needs.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from traces.core.model import Exchange, HttpTraffic, LineError
from traces.core.reading.dialects import anthropic, bedrock, gemini, openai_chat, openai_responses
from traces.core.reading.dialects.base import Dialect
from traces.core.reading.formats.anthropic_messages import AnthropicMessagesAdapter
from traces.core.reading.formats.base import Detection
from traces.core.reading.formats.bedrock_converse import BedrockConverseAdapter
from traces.core.reading.formats.gemini import GeminiAdapter
from traces.core.reading.formats.http_record import (
    read_http_response,
    read_outcome,
    read_request,
    stream_outcome,
)
from traces.core.reading.formats.openai_chat import OpenAIChatAdapter
from traces.core.reading.formats.openai_responses import OpenAIResponsesAdapter
from traces.core.reading.formats.request_log import RequestLogAdapter
from traces.core.reading.records import Record

DIALECTS = [anthropic, openai_chat, openai_responses, gemini, bedrock]
ADAPTERS = [
    AnthropicMessagesAdapter,
    OpenAIChatAdapter,
    OpenAIResponsesAdapter,
    GeminiAdapter,
    BedrockConverseAdapter,
]

ANTHROPIC_REPLY = {
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "output_tokens": 1},
}
ANTHROPIC_STREAM = (
    "event: message_start\n"
    'data: {"type":"message_start","message":{"role":"assistant","model":"m","usage":{}}}\n\n'
    "event: content_block_delta\n"
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}\n\n'
)


# -- the dialect shape -----------------------------------------------------------------
@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.__name__.rsplit(".", 1)[-1])
def test_every_request_log_dialect_has_the_one_shape(dialect):
    assert isinstance(dialect, Dialect)


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.name)
def test_every_request_log_format_is_the_shared_adapter_and_a_dialect(adapter):
    assert issubclass(adapter, RequestLogAdapter)
    assert isinstance(adapter.dialect, Dialect)


def test_a_list_is_a_stream_only_for_the_dialect_that_logs_streams_so():
    chunks = [{"object": "chat.completion.chunk", "choices": [{"delta": {"content": "a"}}]}]
    assert openai_chat.assemble_pieces(chunks) is not None
    assert anthropic.assemble_pieces(chunks) is None
    assert openai_responses.assemble_pieces(chunks) is None
    assert bedrock.assemble_pieces(chunks) is None
    vertex_error = [{"error": {"code": 429, "message": "slow down", "status": "RESOURCE"}}]
    assert gemini.assemble_pieces(vertex_error) is None


def test_bedrock_reads_a_text_stream_as_a_mangled_body():
    body, problem = bedrock.assemble_stream("data: {}\n\n")
    assert body is None and "not a Bedrock event stream" in problem


# -- one recorded HTTP exchange --------------------------------------------------------
def test_a_request_record_is_masked_and_its_body_parsed():
    sent = read_request(
        {
            "method": "POST",
            "url": "https://example.test/v1/messages?key=sk-secret-value-123456",
            "headers": {"x-api-key": "sk-ant-api03-secretsecretsecret"},
            "body": orjson.dumps({"messages": []}),
            "timestamp": 1760000000.5,
        }
    )
    assert sent.body == {"messages": []}
    assert sent.timestamp == 1760000000.5
    meta = sent.meta["http_request"]
    assert "secret" not in orjson.dumps(meta).decode()
    assert "body" not in meta


def test_a_bare_request_body_is_its_own_body():
    sent = read_request({"messages": [], "model": "m"})
    assert sent.body == {"messages": [], "model": "m"} and sent.meta == {} and sent.url == ""


@pytest.mark.parametrize(
    ("response", "status", "problem", "streamed"),
    [
        ({"status_code": 200, "headers": {}, "body": ANTHROPIC_REPLY}, 200, None, False),
        (
            {"status": 201, "headers": {}, "body": orjson.dumps(ANTHROPIC_REPLY).decode()},
            201,
            None,
            False,
        ),
        ({"status_code": 200, "body": None, "body_raw": ANTHROPIC_STREAM}, 200, None, True),
        ({"status_code": 200, "body": "<html>busy</html>"}, 200, "neither JSON nor", False),
        (None, None, "no response was recorded", False),
        (7, None, "not a JSON object", False),
    ],
)
def test_a_response_record_is_read_into_typed_parts(response, status, problem, streamed):
    read = read_http_response(response)
    assert read.http_status == status
    assert (read.stream_text is not None) == streamed
    if problem is None:
        assert read.problem is None
    else:
        assert problem in read.problem


def test_an_http_error_keeps_its_body_as_the_failed_body():
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    outcome = read_outcome({"status_code": 529, "headers": {}, "body": error}, anthropic)
    assert outcome.error == "HTTP 529 overloaded_error: busy"
    assert outcome.body is None and outcome.failed_body == error


def test_a_stream_cut_short_keeps_what_arrived_and_fails():
    outcome = read_outcome(
        {"status_code": 200, "body": None, "body_raw": ANTHROPIC_STREAM}, anthropic
    )
    assert outcome.streamed
    assert outcome.body["content"] == [{"type": "text", "text": "ok"}]
    assert "cut short" in outcome.error


def test_pieces_logged_one_per_record_make_one_streamed_response():
    outcome = stream_outcome({"object": "chat.completion", "choices": []}, None, openai_chat)
    assert outcome.streamed and outcome.error is None


# -- a new format is detection plus its dialect ---------------------------------------
class _TinyAnthropicLog(RequestLogAdapter):
    """What a new request-log format writes: its name, dialect and detection."""

    name = "tiny-anthropic"
    dialect = anthropic
    normalize = staticmethod(anthropic.normalize_message)
    mapped_request_keys = frozenset({"messages", "model"})
    not_a_record = "not a tiny record"

    @classmethod
    def recognise(cls, value: Any) -> Detection | None:
        return Detection(0.5, "tiny") if isinstance(value, dict) and "request" in value else None

    @staticmethod
    def is_model_request(url: str, body: Any) -> bool:
        return url.endswith("/v1/messages")


def _feed(adapter: RequestLogAdapter, *values: Any) -> list[Any]:
    return [
        event for line, value in enumerate(values, 1) for event in adapter.feed(Record(line, value))
    ]


def test_a_new_format_is_only_detection_and_its_dialect():
    request = {
        "method": "POST",
        "url": "https://api.test/v1/messages",
        "headers": {},
        "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}], "top_k": 3},
        "timestamp": 1760000000,
    }
    response = {"status_code": 200, "headers": {}, "body": ANTHROPIC_REPLY, "timestamp": 1760000002}
    telemetry = {"request": {"method": "POST", "url": "https://api.test/v1/traces", "body": "{}"}}
    events = _feed(
        _TinyAnthropicLog(),
        {"request": request, "response": response, "logged_at": "x"},
        telemetry,
        ["not", "a", "record"],
        {"other": 1},
    )
    call, traffic, wrong, unknown = events
    assert isinstance(call, Exchange)
    assert call.response.blocks[0].text == "hi"
    assert (call.stop_reason, call.usage.input_tokens, call.model) == (
        "end_turn",
        3,
        "claude-sonnet-4-6",
    )
    assert (call.started_at, call.ended_at, call.http_status) == (1760000000, 1760000002, 200)
    assert call.extra["request"] == {"top_k": 3} and call.extra["logged_at"] == "x"
    assert isinstance(traffic, HttpTraffic) and traffic.kind == "telemetry"
    assert isinstance(wrong, LineError) and "JSON object" in wrong.message
    assert isinstance(unknown, LineError) and unknown.message == "not a tiny record"
    assert _TinyAnthropicLog.sniff([{"request": {}}]).score == 0.5


def test_a_request_body_that_is_not_an_object_is_a_line_error():
    (event,) = _feed(
        _TinyAnthropicLog(),
        {"request": {"url": "https://a.test/v1/messages", "body": "[1, 2]"}, "response": None},
    )
    assert isinstance(event, LineError) and "request body" in event.message
