"""Bedrock InvokeModel / InvokeModelWithResponseStream recorded (issue 23): what Claude
Code and the Anthropic SDK's AnthropicBedrock client send on Bedrock.

Two real clients against the TLS stand-in of bedrock-runtime.us-east-1.amazonaws.com
(tests/capture/bedrock_standin.py, which checks each SigV4 signature or Bedrock API key
and answers with a real Claude turn from the corpus, streamed as `chunk` frames with real
CRC32s): boto3's `invoke_model` and `invoke_model_with_response_stream` through
`record --forward` (signed for AWS's host, sent on as signed), and AnthropicBedrock with a
Bedrock API key and `base_url` at the reverse route `/proxy/s/<session>/bedrock/<region>`.
Each runs a two-turn tool loop that is read back as Anthropic's Messages calls are: one
loop, both tool runs paired by id across the two requests, stop reasons, usage with cache
reads and writes, the model id from the URL. Errors (AWS's 400 JSON, an exception frame
mid-stream) are API errors with their message; a Titan body is kept and reported unread.
No credential (secret key, session token, signature, API key) is stored, shown or logged.
"""

from __future__ import annotations

import json
import sys
import textwrap

import orjson
import pytest

from tests.capture.bedrock_standin import (
    ACCESS_KEY,
    BEARER_KEY,
    HOST,
    INVALID,
    MODEL,
    SECRET_KEY,
    SESSION_TOKEN,
    THROTTLED,
    TITAN,
    Answer,
    chunks_of,
    first_answer,
    first_events,
    invoke_answer,
    message_events,
    signed_client_env,
    tool_follow_up,
)
from tests.capture.test_commands import manage
from tests.capture.test_forward_proxy import mitmdump, record_env  # noqa: F401 (a fixture)
from tests.capture.test_forward_proxy_bedrock import bedrock_server  # noqa: F401 (a fixture)
from tests.capture.test_proxy_edges import assert_nowhere
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.capture import CapturedExchange, recorded_format
from traces.core.reading.limits import InputRejected

pytestmark = pytest.mark.corpus

WEATHER_ID, TIME_ID = "toolu_01VLL6XYAAGrtc7CDpmpKZMB", "toolu_01FZuC4jLWM67hKreLMKCLRe"
"""The tool uses of the corpus's plain answer; its streamed one has these:"""
STREAM_WEATHER_ID, STREAM_TIME_ID = (
    "toolu_01Mo5Ee5Yb7vrzaxSNS5DVuP",
    "toolu_01GDAGw1KUdi1DCPPprMKGHR",
)

AGENT = (
    textwrap.dedent(
        """
    import json, sys
    import boto3
    from botocore.exceptions import ClientError, EventStreamError

    mode = sys.argv[1]
    client = boto3.client("bedrock-runtime", region_name="us-east-1")  # its own host
    tools = [
        {"name": "get_weather", "description": "The weather.",
         "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}}},
        {"name": "get_time", "description": "The time.",
         "input_schema": {"type": "object", "properties": {"timezone": {"type": "string"}}}},
    ]

    def turn(messages, streamed):
        body = json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 1024,
                           "tools": tools, "messages": messages})
        if not streamed:
            return json.loads(client.invoke_model(modelId=MODEL, body=body)["body"].read())
        answer = client.invoke_model_with_response_stream(modelId=MODEL, body=body)
        message, inputs = None, {}
        for event in answer["body"]:
            data = json.loads(event["chunk"]["bytes"])
            if data["type"] == "message_start":
                message = data["message"]
            elif data["type"] == "content_block_start":
                message["content"].append(data["content_block"])
            elif data["type"] == "content_block_delta":
                block, delta = message["content"][data["index"]], data["delta"]
                if delta["type"] == "text_delta":
                    block["text"] += delta["text"]
                else:
                    inputs[data["index"]] = inputs.get(data["index"], "") + delta["partial_json"]
            elif data["type"] == "message_delta":
                message.update(data["delta"])
                message["usage"].update(data["usage"])
        for index, text in inputs.items():
            message["content"][index]["input"] = json.loads(text)
        return message

    if mode == "odd":
        titan = client.invoke_model(modelId=TITAN, body=json.dumps({"inputText": "Weather?"}))
        print("titan", json.loads(titan["body"].read())["results"][0]["outputText"])
        try:
            turn([{"role": "user", "content": "INVALID"}], False)
        except ClientError as error:
            print("invalid", error.response["Error"]["Code"])
        try:
            turn([{"role": "user", "content": "THROTTLE"}], True)
        except EventStreamError as error:
            print("throttled", error.response["Error"]["Code"])
        sys.exit(0)

    streamed = mode == "stream"
    messages = [{"role": "user", "content": "What is the weather in New York, and the time?"}]
    message = turn(messages, streamed)
    print("first", client.meta.endpoint_url, message["stop_reason"])
    messages.append({"role": "assistant", "content": message["content"]})
    messages.append({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": block["id"], "content": "18 C, sunny, 9:41"}
        for block in message["content"] if block["type"] == "tool_use"
    ]})
    message = turn(messages, streamed)
    print("final", message["stop_reason"], message["content"][0]["text"])
    """
    )
    .replace("=MODEL", f"={MODEL!r}")
    .replace("=TITAN", f"={TITAN!r}")
)


def test_invoke_paths_are_recorded_as_bedrock_invoke():
    for path in ("model/x/invoke", "model/arn:aws:bedrock:us-east-1:1:inference-profile/x/invoke"):
        assert recorded_format("bedrock", f"us-east-1/{path}") == "bedrock-invoke"
        assert recorded_format("bedrock", f"us-east-1/{path}-with-response-stream") == (
            "bedrock-invoke"
        )
    assert recorded_format("bedrock", "us-east-1/model/x/converse") == "bedrock-converse"
    assert recorded_format("bedrock", "us-east-1/model/x/count-tokens") is None
    assert recorded_format("bedrock", "us-east-1/async-invoke") is None


def _assert_loop(report: dict, ids: tuple[str, str], streamed: bool, model: str = MODEL) -> None:
    """The two-turn loop as an Anthropic Messages loop: one loop, both tools paired."""
    assert report["format"] == "bedrock-invoke"
    assert report["totals"]["loops"] == 1
    calls = report["calls"]
    assert [c["status"] for c in calls] == ["ok", "ok"]
    assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn"]
    first_output = 113 if streamed else 112  # the corpus's streamed and plain answers
    assert [(c["input_tokens"], c["output_tokens"]) for c in calls] == [
        (721, first_output),
        (38, 24),
    ]
    assert [(c["cache_read_tokens"], c["cache_write_tokens"]) for c in calls] == [
        (0, 0),
        (721, 120),
    ]
    assert {c["model"] for c in calls} == {model}  # the URL's, not the answer's
    assert all(c["duration_s"] is not None and c["duration_s"] >= 0 for c in calls)
    runs = {r["id"]: r for r in report["tool_runs"]}
    assert set(runs) == set(ids)
    assert [runs[i]["name"] for i in ids] == ["get_weather", "get_time"]
    assert all(
        (r["status"], r["call"], r["result_call"]) == ("paired", 1, 2) for r in runs.values()
    )


def test_record_forward_records_boto3_invoke_model_and_its_stream(
    corpus,  # the stand-in answers with the corpus's Claude turns: skipped without it
    bedrock_server,  # noqa: F811 (the fixture)
    mitmdump,  # noqa: F811 (the fixture)
    tmp_path,
):
    standin, server = bedrock_server
    before = len(standin.calls)
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    env = record_env(tmp_path, mitmdump, **signed_client_env(tmp_path))
    outputs = []
    for mode in ("invoke", "stream", "odd"):
        done = manage(
            "record", "--server", server.base, "--session", f"invoke-{mode}", "--forward",
            "--", sys.executable, str(script), mode, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.encode() + done.stderr.encode())
        if mode != "odd":
            assert f"first https://{HOST} tool_use" in done.stdout
            assert "final end_turn It is 18 °C and sunny in New York, and 9:41 AM." in done.stdout
            assert "bedrock-invoke, 2 calls" in done.stdout
    assert "titan Cloudy, 12 C." in outputs[2].decode()
    assert "invalid ValidationException" in outputs[2].decode()
    assert "throttled throttlingException" in outputs[2].decode()

    # Every call reached AWS's host as signed (the stand-in's SigV4 check passed each).
    calls = standin.calls[before:]
    assert [c.path.rsplit("/", 1)[-1] for c in calls] == ["invoke"] * 2 + [
        "invoke-with-response-stream"
    ] * 2 + ["invoke", "invoke", "invoke-with-response-stream"]
    assert all(c.signature and c.signature_valid and c.host == HOST for c in calls)
    assert calls[0].path.startswith("/model/us.anthropic.claude-sonnet-4-6-v1%3A0/")

    _assert_loop(
        server.wait_report(server.trace_id("proxy:bedrock-invoke:invoke-invoke"), calls=2),
        (WEATHER_ID, TIME_ID),
        streamed=False,
    )
    stream_trace = server.trace_id("proxy:bedrock-invoke:invoke-stream")
    streamed = server.wait_report(stream_trace, calls=2)
    _assert_loop(streamed, (STREAM_WEATHER_ID, STREAM_TIME_ID), streamed=True)
    lines = server.get(f"/traces/{stream_trace}/download").splitlines()
    assert "body_base64" in orjson.loads(lines[0])["response"]  # the frames, kept whole

    odd_trace = server.trace_id("proxy:bedrock-invoke:invoke-odd")
    odd = server.wait_report(odd_trace, calls=2)
    (unread,) = odd["lines"]["errors"]
    assert unread["line"] == 1
    assert f"InvokeModel call to {TITAN}" in unread["message"]
    assert "not an Anthropic Messages request (it holds inputText)" in unread["message"]
    invalid, throttled = odd["calls"]
    assert invalid["status"] == "error" and INVALID in invalid["error"]
    assert "400" in invalid["error"]
    assert throttled["status"] == "error"
    assert throttled["error"] == f"throttlingException: {THROTTLED}"
    odd_lines = server.get(f"/traces/{odd_trace}/download").splitlines()
    assert b"inputText" in odd_lines[0]  # the unread call is stored whole

    secrets = [SECRET_KEY.encode(), SESSION_TOKEN.encode(), ACCESS_KEY.encode()]
    secrets += [c.signature.encode() for c in calls]
    secrets += [c.headers["x-amz-date"].encode() for c in calls]
    assert_nowhere(server, secrets, logs=b"".join(outputs))


def test_anthropic_bedrock_sdk_through_the_reverse_route(corpus, bedrock_server):  # noqa: F811
    """AnthropicBedrock with a Bedrock API key (Claude Code's AWS_BEARER_TOKEN_BEDROCK) and
    its base URL at the reverse route: `messages.stream` then `messages.create`, the
    model's tool uses answered in between."""
    anthropic = pytest.importorskip("anthropic")
    standin, server = bedrock_server
    before = len(standin.calls)
    client = anthropic.AnthropicBedrock(
        api_key=BEARER_KEY,
        aws_region="us-east-1",
        base_url=f"{server.base}/proxy/s/sdk-invoke/bedrock/us-east-1",
        max_retries=0,
    )
    tools = [
        {"name": "get_weather", "input_schema": {"type": "object", "properties": {}}},
        {"name": "get_time", "input_schema": {"type": "object", "properties": {}}},
    ]
    messages: list = [{"role": "user", "content": "What is the weather in New York, and the time?"}]
    with client.messages.stream(
        model=MODEL, max_tokens=1024, tools=tools, messages=messages
    ) as stream:
        first = stream.get_final_message()
    assert first.stop_reason == "tool_use"
    uses = [block for block in first.content if block.type == "tool_use"]
    assert [u.id for u in uses] == [STREAM_WEATHER_ID, STREAM_TIME_ID]
    messages += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": "18 C, sunny, 9:41"}
            for u in uses
        ]},
    ]  # fmt: skip
    final = client.messages.create(model=MODEL, max_tokens=1024, tools=tools, messages=messages)
    assert final.stop_reason == "end_turn" and final.usage.cache_read_input_tokens == 721

    calls = standin.calls[before:]
    assert [c.path for c in calls] == [
        f"/model/{MODEL}/invoke-with-response-stream",
        f"/model/{MODEL}/invoke",
    ]
    assert all(c.signature_valid and c.host == HOST for c in calls)
    assert "anthropic_version" in calls[0].body  # the SDK's, not always bedrock-2023-05-31
    assert "model" not in calls[0].body

    report = server.wait_report(server.trace_id("proxy:bedrock-invoke:sdk-invoke"), calls=2)
    _assert_loop(report, (STREAM_WEATHER_ID, STREAM_TIME_ID), streamed=True)

    # An exception frame mid-stream: the SDK raises it, the call is an API error with it.
    failing = client.with_options(base_url=f"{server.base}/proxy/s/sdk-error/bedrock/us-east-1")
    with (
        pytest.raises(anthropic.APIError, match="Too many requests"),
        failing.messages.stream(
            model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "THROTTLE"}]
        ) as stream,
    ):
        stream.get_final_message()
    (throttled,) = server.wait_report(server.trace_id("proxy:bedrock-invoke:sdk-error"), calls=1)[
        "calls"
    ]
    assert throttled["status"] == "error"
    assert throttled["error"] == f"throttlingException: {THROTTLED}"
    assert_nowhere(server, [BEARER_KEY.encode()])


# -- the reader, on a file recorded as the proxy records ------------------------------------
URL = f"https://{HOST}/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2F{MODEL}"
ARN = f"arn:aws:bedrock:us-east-1:1:inference-profile/{MODEL}"


def _recorded(path: str, request: dict, answer, at: float) -> bytes:
    """One call as the recording proxy writes it (CapturedExchange, credentials masked)."""
    return CapturedExchange(
        "POST", f"{URL}/{path}",
        {"Authorization": "AWS4-HMAC-SHA256 Credential=x", "X-Amz-Security-Token": SESSION_TOKEN},
        json.dumps(request).encode(), at, status=answer.status,
        response_headers={"content-type": answer.content_type, **answer.headers},
        response_body=b"".join(answer.chunks), ended_at=at + 1.5,
        streamed=path.endswith("stream"),
    ).line()  # fmt: skip


def _loop_file(corpus, path: str) -> bytes:
    """A two-turn loop recorded by the proxy, answered as the stand-in answers it."""
    request = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "What is the weather in New York?"}],
    }
    first = invoke_answer(corpus, f"/model/x/{path}", request)
    content = (first_events(corpus) if path.endswith("stream") else None) or []
    uses = [
        e["content_block"] for e in content if e["type"] == "content_block_start"
    ] or first_answer(corpus)["content"]
    follow = tool_follow_up(request, uses)
    second = invoke_answer(corpus, f"/model/x/{path}", follow)
    return _recorded(path, request, first, 100.0) + b"\n" + _recorded(path, follow, second, 110.0)


@pytest.mark.parametrize("path", ["invoke", "invoke-with-response-stream"])
def test_a_recorded_file_is_read_as_anthropic_messages(corpus, path):
    data = _loop_file(corpus, path)
    assert SESSION_TOKEN.encode() not in data
    trace = analyze_bytes(data, filename="bedrock.jsonl")
    assert trace.format == "bedrock-invoke"  # detected from the URL
    report = build_report(trace)
    streamed = path.endswith("stream")
    ids = (STREAM_WEATHER_ID, STREAM_TIME_ID) if streamed else (WEATHER_ID, TIME_ID)
    calls = report["calls"]
    assert [c["duration_s"] for c in calls] == [1.5, 1.5]  # the recorded call's timing
    _assert_loop(report, ids, streamed, model=ARN)  # an inference-profile ARN, decoded
    if streamed:
        assert trace.calls[0].extra["invocation_metrics"]["invocationLatency"] == 812
        assert trace.calls[0].extra["streamed"] is True


def test_stream_errors_and_cut_streams_are_failed_calls(corpus):
    events = message_events(first_answer(corpus) | {"content": [{"type": "text", "text": "Hi"}]})
    cut = Answer(200, "application/vnd.amazon.eventstream", chunks_of(events)[:3])
    throttled = invoke_answer(
        corpus,
        "/model/x/invoke-with-response-stream",
        {"messages": [{"role": "user", "content": "THROTTLE"}]},
    )
    invalid = invoke_answer(corpus, "/model/x/invoke", {"messages": [{"content": "INVALID"}]})
    request = {"anthropic_version": "bedrock-2023-05-31", "messages": []}
    data = b"\n".join(
        [
            _recorded("invoke-with-response-stream", request, cut, 1.0),
            _recorded("invoke-with-response-stream", request, throttled, 2.0),
            _recorded("invoke", request, invalid, 3.0),
        ]
    )
    calls = build_report(analyze_bytes(data, format_name="bedrock-invoke"))["calls"]
    assert [c["status"] for c in calls] == ["error"] * 3
    assert "before message_stop" in calls[0]["error"]
    assert calls[1]["error"] == f"throttlingException: {THROTTLED}"
    assert calls[2]["error"] == f"HTTP 400 {INVALID}"


def test_other_model_families_bodies_are_unread_lines_that_say_why():
    """Nova's body has `messages` too (its own shape), Llama's a `prompt`: neither is read
    as Claude's; each is a line error naming the model and what the body holds."""
    json_answer = Answer(200, "application/json", [b'{"output": {}}'])
    nova = {"schemaVersion": "messages-v1", "messages": [{"role": "user", "content": []}]}
    data = b"\n".join(
        CapturedExchange(
            "POST", f"https://{HOST}/model/{model}/invoke", {}, json.dumps(body).encode(), 1.0,
            status=200, response_headers={"content-type": "application/json"},
            response_body=b"".join(json_answer.chunks),
        ).line()
        for model, body in (("amazon.nova-pro-v1%3A0", nova), ("meta.llama3-70b", {"prompt": "Hi"}))
    )  # fmt: skip
    with pytest.raises(InputRejected) as rejected:  # an upload of no call says why
        analyze_bytes(data, filename="invoke.jsonl")
    first, second = str(rejected.value).split("; line 2: ")
    assert first.startswith("Read as bedrock-invoke, but no model call could be rebuilt")
    assert "call to amazon.nova-pro-v1:0 whose body is not an Anthropic Messages" in first
    assert "(it holds messages, schemaVersion)" in first
    assert "call to meta.llama3-70b" in second and "(it holds prompt)" in second
