"""The Gemini / Vertex adapter: corpus cassettes, name-and-order pairing, streams, bad input."""

from __future__ import annotations

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.dialects import gemini
from traces.core.reading.limits import InputRejected

FOLDER = "gemini_api"
URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"
VERTEX = (
    "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/"
    "publishers/google/models/gemini-2.5-pro:streamGenerateContent"
)


def _corpus(corpus, name: str):
    path = corpus / FOLDER / name
    return analyze_bytes(path.read_bytes(), filename=path.name)


def _jsonl(*records) -> bytes:
    return b"\n".join(orjson.dumps(r) for r in records) + b"\n"


def _pair(contents: list, response, url: str = URL, status: int = 200) -> dict:
    return {
        "request": {"method": "POST", "url": url, "body": {"contents": contents}},
        "response": {"status_code": status, "headers": {}, "body": response},
    }


def _reply(*parts, finish: str = "STOP", usage: dict | None = None) -> dict:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": list(parts)}, "finishReason": finish}
        ],
        "usageMetadata": usage or {"promptTokenCount": 10, "candidatesTokenCount": 2},
        "modelVersion": "gemini-2.5-pro",
    }


def _call(name: str, **args) -> dict:
    return {"functionCall": {"name": name, "args": args}}


def _answer(name: str, response: dict) -> dict:
    return {"functionResponse": {"name": name, "response": response}}


USER = {"role": "user", "parts": [{"text": "go"}]}


# -- corpus -----------------------------------------------------------------------------
# Figures checked against SOURCES.md §15 and by reading the cassettes: functionCall parts
# in responses, functionResponse parts in the next request, usageMetadata, thoughtSignature.
@pytest.mark.corpus
def test_parallel_calls_pair_by_name_and_order(corpus):
    trace = _corpus(corpus, "pydantic-ai_test_google_instructions_only_with_tool_calls.yaml")
    assert trace.format == "gemini" and "generateContent" in trace.detection_reason
    assert len(trace.calls) == 5 and len(trace.loops) == 1
    first = trace.calls[0]
    assert first.model == "gemini-3-flash-preview"
    assert first.tool_call_ids == ("generate_topic@1#1", "generate_topic@1#2", "generate_topic@1#3")
    # the three parallel calls' results, in order: cars, penguins, cars
    runs = trace.tool_runs
    assert [(r.result_text, r.result_call, r.pairing) for r in runs[:3]] == [
        ("cars", 2, "name-order"),
        ("penguins", 2, "name-order"),
        ("cars", 2, "name-order"),
    ]
    assert [r.status for r in runs] == ["paired"] * 6 + ["dangling"]
    assert runs[-1].name == "final_result"  # pydantic-ai's output tool, never answered
    # usage: thinking tokens are output; the system instruction is the system prompt
    assert (first.usage.input_tokens, first.usage.output_tokens) == (83, 30 + 190)
    assert first.system == "Tell three jokes. Generate topics with the generate_topic tool."
    assert first.extra["thought_signatures"] == 1
    report = build_report(trace)
    assert {run["pairing"] for run in report["tool_runs"]} == {"name-order"}


@pytest.mark.corpus
def test_streamed_call_with_thought_signature_is_joined(corpus):
    trace = _corpus(corpus, "pydantic-ai_test_google_streaming_tool_call_thought_signature.yaml")
    first, second = trace.calls
    assert first.extra["streamed"] is True and first.status == "ok"
    assert first.stop_reason == "tool_use" and second.stop_reason == "end_turn"
    (use,) = first.response.tool_uses
    assert (use.name, use.tool_id) == ("get_country", "get_country@1#1")
    assert "thoughtSignature" in use.raw
    (run,) = trace.tool_runs
    assert (run.status, run.result_text, run.result_call) == ("paired", "Mexico", 2)
    assert second.response.blocks[0].text.startswith("The capital of Mexico")


# -- golden -----------------------------------------------------------------------------
def test_trip_loop_report_matches_golden():
    """Parallel same-name calls, a thought, an SSE-streamed call with cached input, an error
    functionResponse, a 429 and its retry."""
    trace = analyze_bytes(golden_input("gemini/trip_loop.jsonl"))
    assert trace.format == "gemini"
    assert [c.status for c in trace.calls] == ["ok", "ok", "error", "ok"]
    assert trace.calls[2].error.startswith("HTTP 429 RESOURCE_EXHAUSTED")
    assert trace.calls[1].extra["streamed"] is True
    assert trace.calls[1].usage.cache_read_tokens == 100
    assert trace.calls[0].extra["http_request"]["headers"]["x-goog-api-key"] == "[masked]"
    weather = [r for r in trace.tool_runs if r.name == "get_weather"]
    assert [r.result_text for r in weather] == ["Oslo: 4°C", "Bergen: 7°C"]
    (hotel,) = [r for r in trace.tool_runs if r.name == "book_hotel"]
    assert hotel.is_error and hotel.result_text == "no rooms left"
    assert_golden("gemini/trip_loop.report.json", build_report(trace))


# -- the pairing rule -------------------------------------------------------------------
def test_results_split_over_two_turns_continue_the_order():
    model = {"role": "model", "parts": [_call("f", n=1), _call("g"), _call("f", n=2)]}
    first = {"role": "user", "parts": [_answer("f", {"output": "one"})]}
    second = {"role": "user", "parts": [_answer("g", {"output": "G"}), _answer("f", {"o": 2})]}
    contents = [USER, model, first, second]
    ids = [gemini.normalize_at(c, i, contents) for i, c in enumerate(contents)]
    assert [b.tool_id for b in ids[1].tool_uses] == ["f@1#1", "g@1#1", "f@1#2"]
    assert [b.tool_id for b in ids[2].tool_results] == ["f@1#1"]
    assert [b.tool_id for b in ids[3].tool_results] == ["g@1#1", "f@1#2"]


def test_the_response_and_its_echo_get_the_same_ids():
    reply = _reply(_call("lookup", q="a"), _call("lookup", q="b"), finish="STOP")
    model = {"role": "model", "parts": reply["candidates"][0]["content"]["parts"]}
    answers = {"role": "user", "parts": [_answer("lookup", {"output": "A"})]}
    trace = analyze_bytes(
        _jsonl(
            _pair([USER], reply),
            _pair([USER, model, answers], _reply({"text": "done"})),
        )
    )
    first, second = trace.tool_runs
    assert (first.id, first.status, first.result_text) == ("lookup@1#1", "paired", "A")
    assert (second.id, second.status) == ("lookup@1#2", "dangling")  # only one answer came
    assert len(trace.tool_runs) == 2  # the echo in request 2 made no new run


def test_error_responses_and_retry_prompts_are_error_results():
    assert gemini.is_error_response({"error": "boom"})
    assert not gemini.is_error_response({"error": None, "output": "fine"})
    retry = _answer("f", {"output": "bad\n\nFix the errors and try again."})
    message = gemini.normalize_content({"role": "user", "parts": [retry]})
    assert message.tool_results[0].is_error


def test_usage_subtracts_cached_content_and_counts_thoughts_as_output():
    usage = gemini.usage_from(
        {
            "promptTokenCount": 1000,
            "cachedContentTokenCount": 600,
            "candidatesTokenCount": 20,
            "thoughtsTokenCount": 80,
        }
    )
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (400, 600, 100)
    assert gemini.usage_from("nope") is None


def test_stream_text_pieces_join_and_a_cut_stream_fails_the_call():
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}}]},
    ]
    body, problem = gemini.assemble_chunks(chunks)
    assert body["candidates"][0]["content"]["parts"] == [{"text": "Hello"}]
    assert problem == "the stream ended without a finish reason"
    cut = "".join(f"data: {orjson.dumps(c).decode()}\r\n\r\n" for c in chunks)
    record = _pair([USER], None)
    record["response"] = {"status_code": 200, "headers": {}, "body": None, "body_raw": cut}
    (call,) = analyze_bytes(_jsonl(record)).calls
    assert call.status == "error" and "without a finish reason" in call.error
    assert call.response_raw["candidates"][0]["content"]["parts"] == [{"text": "Hello"}]


def test_vertex_json_array_stream_and_bare_responses_are_read():
    chunks = [_reply({"text": "a"}, finish=None), _reply({"text": "b"})]
    chunks[0]["candidates"][0].pop("finishReason")
    trace = analyze_bytes(_jsonl(_pair([USER], chunks, url=VERTEX)))
    (call,) = trace.calls
    assert call.status == "ok" and call.extra["streamed"] is True
    assert [b.text for b in call.response.blocks] == ["ab"]
    assert call.model == "gemini-2.5-pro"
    bare = analyze_bytes(_jsonl(_reply({"text": "hi"})))
    assert bare.format == "gemini" and bare.calls[0].request_recorded is False


# -- bad input --------------------------------------------------------------------------
def test_bad_lines_become_line_errors_and_the_rest_ingests():
    data = _jsonl(
        _pair([USER], _reply({"text": "ok"})),
        {"request": {"method": "POST", "url": URL, "body": "not json"}, "response": None},
        {"request": {"method": "POST", "url": URL, "body": {"contents": 7}}, "response": None},
        [1, 2],
        {"neither": True},
    )
    data += b'{"request": {"url": "' + URL.encode() + b'", "body": {"contents": [\n'
    trace = analyze_bytes(data, format_name="gemini")
    assert len(trace.calls) == 1
    messages = {e.line: e.message for e in trace.line_errors}
    assert messages[2] == "the request body is not a JSON object"
    assert messages[3] == "request 'contents' is not a list"
    assert messages[4] == "expected a JSON object with request and response"
    assert messages[5].startswith("not a Gemini record")
    assert messages[6].startswith("cut off mid-record")


def test_a_response_with_no_candidates_or_no_json_is_a_failed_call():
    trace = analyze_bytes(
        _jsonl(
            _pair([USER], {"promptFeedback": {"blockReason": "SAFETY"}}),
            {
                "request": {"url": URL, "body": {"contents": [USER]}},
                "response": {"status_code": 500, "body": None, "body_raw": "<html>oops</html>"},
            },
        )
    )
    blocked, broken = trace.calls
    assert blocked.response is None and blocked.extra["promptFeedback"]["blockReason"] == "SAFETY"
    assert broken.status == "error" and broken.error == "HTTP 500"


def test_a_file_of_nothing_gemini_is_refused_clearly():
    with pytest.raises(InputRejected):
        analyze_bytes(_jsonl({"unrelated": 1}), format_name="gemini")


def test_a_response_with_no_call_before_it_is_an_orphan_paired_by_name():
    contents = [USER, {"role": "user", "parts": [_answer("f", {"output": "x"})]}]
    trace = analyze_bytes(_jsonl(_pair(contents, _reply({"text": "ok"}))))
    (run,) = trace.tool_runs
    assert (run.id, run.status, run.pairing) == ("f@?#1", "orphan", "name-order")


def test_count_tokens_is_other_traffic_not_a_call():
    count = URL.replace(":generateContent", ":countTokens")
    trace = analyze_bytes(
        _jsonl(_pair([USER], {"totalTokens": 3}, url=count), _pair([USER], _reply({"text": "x"})))
    )
    assert len(trace.calls) == 1
    assert [(t.kind, t.line) for t in trace.other_traffic] == [("other", 1)]
