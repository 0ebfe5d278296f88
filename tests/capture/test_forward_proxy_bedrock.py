"""Bedrock through the forward proxy (issue 23): the real boto3 `bedrock-runtime` client,
unconfigured (its own https://bedrock-runtime.us-east-1.amazonaws.com), run by
`manage.py record --forward`, which gives it HTTPS_PROXY and AWS_CA_BUNDLE.

The calls reach a local TLS stand-in of that host (tests/capture/bedrock_standin.py)
that checks each SigV4 signature as AWS would: they arrive with the path, Host and
headers they were signed for, never re-signed. Converse and ConverseStream (AWS's binary
event stream, kept whole as `body_base64`) are both recorded and read back as the same
agent loop: calls, the tool run paired by `toolUseId`, usage, stop reasons, the model id
from the URL. Neither the secret key, the session token nor any signature is stored,
shown or logged.
"""

from __future__ import annotations

import base64
import re
import sys
import textwrap

import orjson
import pytest
import yaml
from botocore.eventstream import EventStreamBuffer

from tests.capture.bedrock_standin import (
    ACCESS_KEY,
    FINAL_TURN,
    FIRST_TURN,
    HOST,
    MODEL,
    SECRET_KEY,
    SESSION_TOKEN,
    TOOL_USE_ID,
    bedrock_standin,
    frame,
    signed_client_env,
    stream_of,
)
from tests.capture.conftest import capture_server
from tests.capture.test_commands import manage
from tests.capture.test_forward_proxy import mitmdump, record_env  # noqa: F401 (a fixture)
from tests.capture.test_proxy_edges import assert_nowhere
from traces.capture.bedrock_route import bedrock_target
from traces.capture.forward_addon import allow_patterns, vendor_route
from traces.core.reading.capture import CapturedExchange, recorded_format

pytestmark = pytest.mark.corpus

RECORDED_STREAM = "bedrock_converse/openllmetry_test_anthropic_converse_stream_with_tool_use.yaml"

AGENT = textwrap.dedent(
    """
    import json, sys
    import boto3

    streamed = sys.argv[1] == "stream"
    client = boto3.client("bedrock-runtime", region_name="us-east-1")  # its own host
    tools = {"tools": [{"toolSpec": {
        "name": "get_weather", "description": "The weather in a city.",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }}]}
    messages = [{"role": "user", "content": [{"text": "What is the weather in New York?"}]}]

    def turn():
        if not streamed:
            answer = client.converse(modelId=MODEL, messages=messages, toolConfig=tools)
            return answer["output"]["message"], answer["stopReason"], answer["usage"]
        answer = client.converse_stream(modelId=MODEL, messages=messages, toolConfig=tools)
        blocks, inputs, stop, usage = {}, {}, None, None
        for event in answer["stream"]:
            if "contentBlockStart" in event:
                start = event["contentBlockStart"]
                blocks[start["contentBlockIndex"]] = {"toolUse": dict(start["start"]["toolUse"])}
                inputs[start["contentBlockIndex"]] = ""
            elif "contentBlockDelta" in event:
                delta = event["contentBlockDelta"]
                index = delta["contentBlockIndex"]
                if "text" in delta["delta"]:
                    block = blocks.setdefault(index, {"text": ""})
                    block["text"] += delta["delta"]["text"]
                else:
                    inputs[index] += delta["delta"]["toolUse"]["input"]
            elif "messageStop" in event:
                stop = event["messageStop"]["stopReason"]
            elif "metadata" in event:
                usage = event["metadata"]["usage"]
        for index, text in inputs.items():
            blocks[index]["toolUse"]["input"] = json.loads(text)
        return {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}, stop, usage

    message, stop, usage = turn()
    print("first", client.meta.endpoint_url, stop, usage["inputTokens"])
    messages.append(message)
    use = next(b["toolUse"] for b in message["content"] if "toolUse" in b)
    messages.append({"role": "user", "content": [{"toolResult": {
        "toolUseId": use["toolUseId"], "content": [{"text": "18 C, sunny"}],
    }}]})
    message, stop, usage = turn()
    print("final", stop, usage["outputTokens"], message["content"][0]["text"])
    """
).replace("MODEL", repr(MODEL))


def test_the_stand_in_writes_event_streams_as_aws_does(corpus):
    """Frames AWS sent (a ConverseStream recorded by openllmetry), parsed by botocore and
    written again by the stand-in's encoder, are the same bytes; its own streams parse."""
    document = yaml.safe_load((corpus / RECORDED_STREAM).read_text())
    (recorded,) = [
        i["response"]["body"]["string"]
        for i in document["interactions"]
        if isinstance(i["response"]["body"]["string"], bytes)
    ]
    parsed = EventStreamBuffer()
    parsed.add_data(recorded)
    assert b"".join(frame(dict(m.headers), m.payload) for m in parsed) == recorded
    ours = EventStreamBuffer()
    ours.add_data(b"".join(stream_of(FIRST_TURN)))
    kinds = [m.headers[":event-type"] for m in ours]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]


def test_bedrock_hosts_are_routed_with_their_region_and_others_tunnelled():
    assert vendor_route(HOST, "/model/a%3A0/converse") == (
        "bedrock",
        "/us-east-1/model/a%3A0/converse",
    )
    assert vendor_route("bedrock-runtime.eu-west-3.amazonaws.com", "/x")[1] == "/eu-west-3/x"
    for other in ("bedrock.us-east-1.amazonaws.com", "s3.us-east-1.amazonaws.com"):
        assert vendor_route(other, "/model/a/converse") is None  # tunnelled, unrecorded
    pattern = re.compile(allow_patterns()[-1])
    assert pattern.match(f"{HOST}:443") and not pattern.match(f"{HOST}.evil.example:443")
    assert recorded_format("bedrock", "us-east-1/model/x/converse-stream") == "bedrock-converse"
    assert recorded_format("bedrock", "us-east-1/model/x/invoke") == "bedrock-invoke"
    assert recorded_format("bedrock", "us-east-1/model/x/count-tokens") is None  # passed on


def test_the_path_goes_on_as_it_was_signed():
    """The raw path's escapes are kept (a model id's %3A, an ARN's %2F); the Host is AWS's."""
    base = "https://bedrock-runtime.{region}.amazonaws.com"
    arn = "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.x"
    target = bedrock_target(
        base,
        "us-east-1/model/arn:aws:bedrock:us-east-1:1:inference-profile/us.x/converse",
        f"/proxy/s/one/bedrock/us-east-1/model/{arn}/converse",
        "",
    )
    assert target.url == f"https://{HOST}/model/{arn}/converse"
    assert target.host == HOST
    assert "not an AWS region" in bedrock_target(base, "evil.example/x", None, "")
    assert "cannot be sent on" in bedrock_target(
        base, "us-east-1/../x", "/proxy/bedrock/us-east-1/../x", ""
    )


def test_a_binary_answer_is_kept_whole_and_older_lines_still_read():
    stream = b"".join(stream_of(FINAL_TURN))
    exchange = CapturedExchange(
        "POST",
        f"https://{HOST}/model/x/converse-stream",
        {"Authorization": "AWS4-HMAC-SHA256 Credential=…", "X-Amz-Date": "20261201T230000Z"},
        b"{}",
        0.0,
        status=200,
        response_headers={"content-type": "application/vnd.amazon.eventstream"},
        response_body=stream,
        streamed=True,
    )
    line = orjson.loads(exchange.line())
    assert base64.b64decode(line["response"]["body_base64"]) == stream
    assert line["response"]["body"] is None and "body_raw" not in line["response"]
    assert line["request"]["headers"] == {"Authorization": "[masked]", "X-Amz-Date": "[masked]"}
    text = CapturedExchange(
        "POST", "https://api.anthropic.com/v1/messages", {}, b"{}", 0.0, status=200,
        response_headers={"content-type": "text/event-stream"}, response_body=b"data: {}\n\n",
        streamed=True,
    )  # fmt: skip
    assert orjson.loads(text.line())["response"]["body_raw"] == "data: {}\n\n"


@pytest.fixture(scope="module")
def bedrock_server(tmp_path_factory):
    """The stand-in, and a daphne whose Bedrock upstream it is (trusted by its CA bundle)."""
    folder = tmp_path_factory.mktemp("bedrock")
    with (
        bedrock_standin(folder) as standin,
        capture_server(
            folder,
            INSPECTOR_UPSTREAM_BEDROCK=standin.base,
            INSPECTOR_UPSTREAM_CA_BUNDLE=str(standin.cert),
        ) as server,
    ):
        yield standin, server


def test_record_forward_records_boto3_converse_and_converse_stream(
    bedrock_server,
    mitmdump,  # noqa: F811 (the fixture)
    tmp_path,
):
    standin, server = bedrock_server
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    env = record_env(tmp_path, mitmdump, **signed_client_env(tmp_path))
    outputs = []
    for kind in ("converse", "stream"):
        done = manage(
            "record", "--server", server.base, "--session", f"bedrock-{kind}", "--forward",
            "--", sys.executable, str(script), kind, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"first https://{HOST} tool_use 412" in done.stdout
        assert "final end_turn 31 It is 18 °C and sunny in New York." in done.stdout
        assert "bedrock-converse, 2 calls" in done.stdout
        outputs.append(done.stdout.encode() + done.stderr.encode())

    # Four calls reached AWS's host as signed: the stand-in's SigV4 check passed each.
    assert [c.path.split("/")[-1] for c in standin.calls] == ["converse"] * 2 + [
        "converse-stream"
    ] * 2
    assert all(c.signature_valid and c.host == HOST for c in standin.calls)
    assert all(
        c.path.startswith("/model/us.anthropic.claude-sonnet-4-6-v1%3A0/") for c in standin.calls
    )
    assert all(c.headers["x-amz-security-token"] == SESSION_TOKEN for c in standin.calls)

    for kind in ("converse", "stream"):
        trace_id = server.trace_id(f"proxy:bedrock-converse:bedrock-{kind}")
        report = server.wait_report(trace_id, calls=2)
        assert report["format"] == "bedrock-converse"
        calls = report["calls"]
        assert [c["status"] for c in calls] == ["ok", "ok"]
        assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn"]
        assert [(c["input_tokens"], c["output_tokens"]) for c in calls] == [(412, 57), (498, 31)]
        assert {c["model"] for c in calls} == {MODEL}
        (run,) = report["tool_runs"]
        assert (run["id"], run["name"], run["status"]) == (TOOL_USE_ID, "get_weather", "paired")
        assert (run["call"], run["result_call"]) == (1, 2)
        assert run["result_preview"] == "18 C, sunny"

    # The event stream is in the recorded line byte for byte (the original, downloaded).
    stream_trace = server.trace_id("proxy:bedrock-converse:bedrock-stream")
    lines = server.get(f"/traces/{stream_trace}/download").splitlines()
    kept = [base64.b64decode(orjson.loads(line)["response"]["body_base64"]) for line in lines]
    assert kept == [b"".join(stream_of(FIRST_TURN)), b"".join(stream_of(FINAL_TURN))]

    secrets = [SECRET_KEY.encode(), SESSION_TOKEN.encode(), ACCESS_KEY.encode()]
    secrets += [c.signature.encode() for c in standin.calls]
    secrets += [c.headers["x-amz-date"].encode() for c in standin.calls]
    assert_nowhere(server, secrets, logs=b"".join(outputs))


def test_the_stand_in_refuses_a_path_changed_on_the_way():
    """Why the path goes on raw: a signature over `%3A` does not hold for `:`."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    from tests.capture.bedrock_standin import signature_valid

    path = "/model/us.anthropic.claude-sonnet-4-6-v1%3A0/converse"
    request = AWSRequest("POST", f"https://{HOST}{path}", data=b"{}")
    request.headers["Content-Type"] = "application/json"
    SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), "bedrock", "us-east-1").add_auth(
        request
    )
    headers = {k.lower(): v for k, v in request.headers.items()} | {"host": HOST}
    assert signature_valid("POST", path, headers, b"{}")
    assert not signature_valid("POST", path.replace("%3A", ":"), headers, b"{}")
    assert not signature_valid("POST", path, headers | {"host": "127.0.0.1:8000"}, b"{}")
    assert not signature_valid("POST", path, headers, b'{"x": 1}')
