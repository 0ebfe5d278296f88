"""The OpenAI Responses API adapter: corpus cassettes, chained calls, streams, bad input."""

from __future__ import annotations

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.dialects import openai_responses as responses

FOLDER = "openai_responses_api"


def _corpus(corpus, name: str):
    path = corpus / FOLDER / name
    return analyze_bytes(path.read_bytes(), filename=path.name)


def _jsonl(*records) -> bytes:
    return b"\n".join(orjson.dumps(r) for r in records) + b"\n"


def _response(output: list, status: str = "completed", **fields) -> dict:
    return {
        "id": fields.pop("id", "resp_x"),
        "object": "response",
        "status": status,
        "model": "gpt-5",
        "output": output,
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 3,
        },
        **fields,
    }


FUNCTION_CALL = {
    "id": "fc_1",
    "type": "function_call",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city":"Oslo"}',
}


# -- corpus -----------------------------------------------------------------------------
# Counts verified by reading each cassette: its interactions, the `function_call` items
# in `output`, the `function_call_output` items of the next request (which sends only
# those, naming `previous_response_id`), `status`, `usage` and `created_at/completed_at`.
@pytest.mark.corpus
def test_chained_tool_call_is_rebuilt_from_previous_response(corpus):
    trace = _corpus(corpus, "agent_framework_test_agent_with_tool_calls.yaml")
    assert trace.format == "openai-responses"
    assert len(trace.calls) == 2 and len(trace.loops) == 1
    first, second = trace.calls
    assert first.stop_reason == "tool_use" and second.stop_reason == "end_turn"
    # The second request sent 1 item; the model saw system + user + function_call + output.
    assert second.message_count == 4 and second.extra["inherited_items"] == 3
    assert second.extends_previous and second.prefix_len == 2
    assert second.extra["previous_response_id"] == first.extra["response_id"]
    (run,) = trace.tool_runs
    assert (run.id, run.name, run.call, run.result_call, run.status) == (
        "call_mhr5WBWG8kgyIy15JTItue8Q",
        "get_weather",
        1,
        2,
        "paired",
    )
    assert run.input == {"location": "San Francisco"}
    assert run.result_text == "The weather in San Francisco is sunny and 72°F"
    assert first.system == [
        {
            "type": "input_text",
            "text": "You are a weather assistant. Use the get_weather tool when asked about weather.",
        }
    ]
    assert (first.usage.input_tokens, first.usage.output_tokens) == (73, 16)
    assert (second.usage.input_tokens, second.usage.output_tokens) == (108, 17)
    assert first.duration_s == 1.0  # completed_at - created_at
    assert build_report(trace)["outcome"]["kind"] == "finished"


@pytest.mark.corpus
def test_parallel_function_calls_pair_by_call_id(corpus):
    trace = _corpus(corpus, "agent_framework_test_multiple_tools.yaml")
    report = build_report(trace)
    assert report["totals"]["calls"] == 2 and report["totals"]["loops"] == 1
    assert [(r["id"], r["name"], r["status"], r["batch_size"]) for r in report["tool_runs"]] == [
        ("call_J7YUFuqJu49gxvGhUKpb3qQL", "get_temperature", "paired", 2),
        ("call_bppU66GAgtTnCo1NPkNe3801", "get_humidity", "paired", 2),
    ]
    # The fc_ item ids are never used for pairing.
    assert not any(run.id.startswith("fc_") for run in trace.tool_runs)
    assert [r.result_text for r in trace.tool_runs] == ["72°F", "65%"]
    assert (report["totals"]["input_tokens"], report["totals"]["output_tokens"]) == (346, 74)


@pytest.mark.corpus
def test_single_forced_tool_call_is_left_dangling(corpus):
    trace = _corpus(corpus, "test_responses_create_captures_tool_call_content[content_mode0].yaml")
    (call,) = trace.calls
    assert call.stop_reason == "tool_use"
    # `input` is a bare string: one user message.
    assert call.appended[0].role == "user" and call.message_count == 1
    (run,) = trace.tool_runs
    assert (run.id, run.status) == ("call_90uO5LcGP5vTBTCrjyhYtWsA", "dangling")
    assert build_report(trace)["outcome"]["kind"] == "halted_on_tool_use"


@pytest.mark.corpus
def test_hidden_reasoning_and_reasoning_tokens(corpus):
    trace = _corpus(corpus, "test_responses_create_reports_reasoning_tokens[content_mode0].yaml")
    (call,) = trace.calls
    kinds = [b.kind for b in call.response.blocks]
    assert kinds == ["redacted_thinking", "text"]  # summary [] and no encrypted content
    assert call.extra["reasoning_tokens"] == 9
    assert (call.usage.input_tokens, call.usage.output_tokens) == (44, 288)
    assert call.model == "gpt-5.4-2026-03-05" and call.stop_reason == "end_turn"


@pytest.mark.corpus
def test_streamed_events_use_response_completed(corpus):
    trace = _corpus(corpus, "test_responses_create_streaming[content_mode0].yaml")
    (call,) = trace.calls
    assert call.status == "ok" and call.extra["streamed"] is True
    assert call.system == "You are a helpful assistant."
    assert [b.text for b in call.response.blocks] == ["This is a test."]
    assert (call.usage.input_tokens, call.usage.output_tokens) == (22, 6)


@pytest.mark.corpus
def test_every_corpus_file_detects_as_responses(corpus):
    for path in sorted((corpus / FOLDER).iterdir()):
        trace = analyze_bytes(path.read_bytes(), filename=path.name)
        assert trace.format == "openai-responses", path.name
        assert trace.line_errors == ()
        assert all(c.status == "ok" for c in trace.calls)


# -- golden -----------------------------------------------------------------------------
def test_chained_and_stateless_report_matches_golden():
    """previous_response_id chain, a stateless loop cut at max_output_tokens, a 400."""
    trace = analyze_bytes(golden_input("openai-responses/chained_and_stateless.jsonl"))
    assert trace.calls[0].response.blocks[0].kind == "thinking"
    assert trace.calls[4].extra["previous_response_missing"] is True
    assert_golden("openai-responses/chained_and_stateless.report.json", build_report(trace))


# -- dialect ----------------------------------------------------------------------------
def test_usage_subtracts_cached_input_tokens():
    usage = responses.usage_from(
        {"input_tokens": 500, "input_tokens_details": {"cached_tokens": 384}, "output_tokens": 9}
    )
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (116, 384, 9)


def test_stop_reasons():
    assert responses.stop_reason_of(_response([FUNCTION_CALL])) == "tool_use"
    cut = _response([], status="incomplete", incomplete_details={"reason": "max_output_tokens"})
    assert responses.stop_reason_of(cut) == "max_tokens"
    assert responses.stop_reason_of(_response([])) == "end_turn"
    truncated = {**FUNCTION_CALL, "status": "incomplete", "arguments": '{"ci'}
    cut_call = {**cut, "output": [truncated]}
    assert responses.stop_reason_of(cut_call) == "max_tokens"
    hosted = {"id": "ws_1", "type": "web_search_call", "status": "completed"}
    assert responses.stop_reason_of(_response([hosted])) == "end_turn"


def test_items_normalise_to_tool_blocks_keyed_by_call_id():
    call = responses.normalize_item(FUNCTION_CALL)
    assert call.role == "assistant"
    assert (call.blocks[0].kind, call.blocks[0].tool_id, call.blocks[0].input) == (
        "tool_use",
        "call_1",
        {"city": "Oslo"},
    )
    output = responses.normalize_item(
        {"type": "function_call_output", "call_id": "call_1", "output": "5°C"}
    )
    assert output.role == "tool"
    assert (output.blocks[0].kind, output.blocks[0].tool_id) == ("tool_result", "call_1")
    bad = responses.normalize_item({**FUNCTION_CALL, "arguments": '{"city": '})
    assert bad.blocks[0].input == '{"city": '


def test_stream_without_terminal_event_is_rebuilt_and_marked_cut_short():
    events = [
        {"type": "response.created", "response": _response([], status="in_progress")},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**FUNCTION_CALL, "arguments": ""},
        },
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"ci'},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": 'ty":1}'},
    ]
    text = "".join(f"event: {e['type']}\ndata: {orjson.dumps(e).decode()}\n\n" for e in events)
    body, error = responses.assemble_stream(text)
    assert error is not None and "cut short" in error
    assert body["output"][0]["arguments"] == '{"city":1}'
    assert responses.read_response(body).message.tool_uses[0].input == {"city": 1}


def test_failed_response_and_error_event_fail_the_call():
    failed = _response([], status="failed", error={"code": "server_error", "message": "boom"})
    record = {"request": {"model": "gpt-5", "input": "hi"}, "response": failed}
    (call,) = analyze_bytes(_jsonl(record)).calls
    assert call.status == "error" and call.error == "server_error: boom"
    events = [
        {"type": "response.created", "response": _response([], status="in_progress")},
        {"type": "error", "code": "rate_limit_exceeded", "message": "slow down"},
    ]
    _body, error = responses.assemble_events(events)
    assert error == "rate_limit_exceeded: slow down"


def test_events_logged_one_per_line_form_one_response():
    done = _response([{"type": "message", "role": "assistant", "content": "ok"}], id="resp_9")
    records = [
        {"type": "response.created", "sequence_number": 0, "response": _response([])},
        {"type": "response.completed", "sequence_number": 1, "response": done},
        {"request": {"model": "gpt-5", "previous_response_id": "resp_9", "input": "more"}},
    ]
    trace = analyze_bytes(_jsonl(*records))
    assert trace.format == "openai-responses"
    first, second = trace.calls
    assert first.line == 1 and first.request_recorded is False and first.status == "ok"
    assert first.response.blocks[0].text == "ok"
    # The chained request inherits the streamed response's output item.
    assert second.extra["inherited_items"] == 1 and second.status == "error"


# -- detection --------------------------------------------------------------------------
def test_bare_body_pairs_pick_the_right_openai_format():
    chat_record = {
        "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        "response": {"object": "chat.completion", "choices": [{"message": {"content": "x"}}]},
    }
    responses_record = {"request": {"model": "gpt-5", "input": "hi"}, "response": _response([])}
    assert analyze_bytes(_jsonl(responses_record)).format == "openai-responses"
    assert analyze_bytes(_jsonl(chat_record)).format == "openai-chat"


def test_nock_recording_of_a_response_is_not_taken_for_anthropic():
    # Anthropic's sniffer matches '"type":"message"' in the body text; output items have it.
    body = _response([{"type": "message", "role": "assistant", "content": []}])
    record = {"status": 200, "headers": {}, "body": orjson.dumps(body).decode()}
    trace = analyze_bytes(_jsonl(record))
    assert trace.format == "openai-responses"
    assert trace.calls[0].request_recorded is False


# -- malformed input --------------------------------------------------------------------
def test_bad_lines_become_line_errors_and_the_rest_ingests():
    good = {"request": {"model": "gpt-5", "input": "hi"}, "response": _response([])}
    lines = [
        orjson.dumps(good),
        b'{"request": {"input": "cut',
        b'{"hello": "world"}',
        b'{"request": {"model": "gpt-5", "input": 42}, "response": null}',
        b'{"request": ["not", "an", "object"], "response": null}',
        orjson.dumps(good),
    ]
    trace = analyze_bytes(b"\n".join(lines) + b"\n")
    assert trace.format == "openai-responses"
    assert [c.line for c in trace.calls] == [1, 6]
    errors = {e.line: e.message for e in trace.line_errors}
    assert sorted(errors) == [2, 3, 4, 5]
    assert "cut off" in errors[2]
    assert "not a Responses API record" in errors[3]
    assert errors[4] == "request 'input' is neither a string nor a list of items"
    assert errors[5] == "the request body is not a JSON object"
