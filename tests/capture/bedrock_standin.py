"""A local TLS stand-in of bedrock-runtime.us-east-1.amazonaws.com for the forward proxy's
Bedrock tests: it checks each call's SigV4 signature as AWS would (with botocore's own
signer, over the path, Host and headers it received), or a Bedrock API key (`Authorization:
Bearer`, what AnthropicBedrock's `api_key` sends), and answers a weather agent's two
turns (a tool use, then the final answer) as Converse JSON or as a ConverseStream AWS
event stream, and, for InvokeModel and InvokeModelWithResponseStream, as Anthropic
Messages: the first turn is a real Anthropic answer from the corpus (two parallel tool
uses; the streamed one replayed event by event in `chunk` frames), the final one written
here with cache reads and writes. A Titan body gets Titan's answer; a prompt asking for
`THROTTLE` or `INVALID` gets the exception frame or the 400 AWS sends.

botocore has an event-stream parser but no encoder, so `frame` writes frames as the AWS
spec says: prelude (total and headers length, big-endian), its CRC32, typed headers,
payload, and the message's CRC32. tests/capture/test_forward_proxy_bedrock.py checks it
against a ConverseStream recorded from AWS (byte for byte) and botocore's parser.
"""

from __future__ import annotations

import base64
import datetime
import functools
import ipaddress
import json
import re
import ssl
import struct
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HOST = "bedrock-runtime.us-east-1.amazonaws.com"
ACCESS_KEY = "AKIAFAKEBEDROCK12345"
SECRET_KEY = "fakeBedrockSecretKey/0123456789abcdefghij"
SESSION_TOKEN = "FwoGZXIvYXdzEFAKEfakeSessionToken0123456789abcdefghijklmnopqrstuvwxyz"
MODEL = "us.anthropic.claude-sonnet-4-6-v1:0"
TOOL_USE_ID = "tooluse_weather_nyc_01"
BEARER_KEY = "ABSKQmVkcm9ja0FQSUtleS1mYWtlLWJlYXJlci1rZXktMDEyMzQ1Njc4OWFiY2RlZg=="
"""A Bedrock API key (the `AWS_BEARER_TOKEN_BEDROCK` kind), sent as `Authorization: Bearer`."""
TITAN = "amazon.titan-text-express-v1"
CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
"""The public corpus, as tests/conftest.py finds it (not imported from there: bench
scripts use this module, and that module sets the test run's environment)."""

FIRST_TURN = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"text": "Let me look up the weather."},
                {
                    "toolUse": {
                        "toolUseId": TOOL_USE_ID,
                        "name": "get_weather",
                        "input": {"city": "New York"},
                    }
                },
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {"inputTokens": 412, "outputTokens": 57, "totalTokens": 469},
    "metrics": {"latencyMs": 321},
}
FINAL_TURN = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [{"text": "It is 18 °C and sunny in New York."}],
        }
    },
    "stopReason": "end_turn",
    "usage": {"inputTokens": 498, "outputTokens": 31, "totalTokens": 529},
    "metrics": {"latencyMs": 254},
}
AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<scope>[^,]+), "
    r"SignedHeaders=(?P<signed>[^,]+), Signature=(?P<signature>[0-9a-f]{64})"
)


# -- AWS event-stream frames ---------------------------------------------------------------
def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message; every header a string (type 7), as Bedrock sends them."""
    encoded = b"".join(
        struct.pack(">B", len(name)) + name.encode() + b"\x07" + struct.pack(">H", len(value))
        + value.encode()
        for name, value in headers.items()
    )  # fmt: skip
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def event(kind: str, payload: dict[str, Any]) -> bytes:
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return frame(headers, json.dumps(payload, separators=(",", ":")).encode())


def stream_of(turn: dict[str, Any]) -> list[bytes]:
    """A Converse answer as the ConverseStream events that carry it (tool input in two
    JSON fragments, as Bedrock splits it)."""
    message = turn["output"]["message"]
    frames = [event("messageStart", {"role": message["role"]})]
    for index, block in enumerate(message["content"]):
        if "toolUse" in block:
            use = block["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            frames.append(event("contentBlockStart", {"contentBlockIndex": index, "start": start}))
            text = json.dumps(use["input"])
            for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                delta = {"toolUse": {"input": piece}}
                frames.append(
                    event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
                )
        else:
            for word in re.findall(r"\S+\s*", block["text"]):
                delta = {"text": word}
                frames.append(
                    event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta})
                )
        frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
    frames.append(event("messageStop", {"stopReason": turn["stopReason"]}))
    frames.append(event("metadata", {"usage": turn["usage"], "metrics": turn["metrics"]}))
    return frames


# -- InvokeModel: Anthropic Messages in Bedrock's envelope ----------------------------------
PLAIN_CASSETTE = "anthropic_messages_api/test_anthropic_instrumentation_multiple_tool_calling.yaml"
STREAM_CASSETTE = (
    "anthropic_messages_api/test_anthropic_instrumentation_multiple_tool_calling_streaming.yaml"
)
"""Claude's real first turn (two parallel tool uses: get_weather, get_time), as a Messages
JSON answer and as the server-sent events of a streamed one."""
INVOKE_FINAL = {
    "id": "msg_standin_final_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [{"type": "text", "text": "It is 18 °C and sunny in New York, and 9:41 AM."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 38,
        "cache_creation_input_tokens": 120,
        "cache_read_input_tokens": 721,
        "output_tokens": 24,
    },
}
METRICS = {
    "inputTokenCount": 721,
    "outputTokenCount": 113,
    "invocationLatency": 812,
    "firstByteLatency": 301,
}
THROTTLED = "Too many requests, please wait before trying again."
INVALID = "Malformed input request: #: extraneous key [bogus] is not permitted"
TITAN_ANSWER = {
    "inputTextTokenCount": 6,
    "results": [{"tokenCount": 9, "outputText": "Cloudy, 12 C.", "completionReason": "FINISH"}],
}


@functools.cache
def cassette_body(corpus: Path, name: str) -> str:
    """The response body of a corpus cassette's one interaction (parsed once: the YAML
    would otherwise be most of a streamed answer's time in bench/forward_bedrock.py)."""
    document = yaml.safe_load((corpus / name).read_text())
    body = document["interactions"][0]["response"]["body"]["string"]
    return body.decode() if isinstance(body, bytes) else body


def first_answer(corpus: Path) -> dict[str, Any]:
    return json.loads(cassette_body(corpus, PLAIN_CASSETTE))


def signed_client_env(folder: Path) -> dict[str, str]:
    """The environment of a boto3 child signing with the fake keys and nothing else: no
    config, credentials file or instance metadata of the machine's (the CA comes from
    `record --forward`)."""
    return {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_SESSION_TOKEN": SESSION_TOKEN,
        "AWS_CONFIG_FILE": str(folder / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(folder / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CA_BUNDLE": "",
    }


def tool_follow_up(request: dict[str, Any], uses: list[dict[str, Any]]) -> dict[str, Any]:
    """The second turn of a tool loop: the first request, the model's content, and a
    result for each of its tool uses."""
    return {
        **request,
        "messages": [
            *request["messages"],
            {"role": "assistant", "content": uses},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": u["id"], "content": "18 C"}
                for u in uses if u["type"] == "tool_use"
            ]},
        ],
    }  # fmt: skip


def first_events(corpus: Path) -> list[dict[str, Any]]:
    """The streamed first turn's events as Claude sent them (Bedrock sends no pings)."""
    events = [
        json.loads(line[len("data:") :])
        for line in cassette_body(corpus, STREAM_CASSETTE).splitlines()
        if line.startswith("data:")
    ]
    return [e for e in events if e["type"] != "ping"]


def message_events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A Messages answer as the stream events that carry it (its text word by word)."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "text", "text": ""}})  # fmt: skip
        for word in re.findall(r"\S+\s*", block["text"]):
            delta = {"type": "text_delta", "text": word}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append({"type": "message_delta", "delta": delta,
                   "usage": {"output_tokens": usage["output_tokens"]}})  # fmt: skip
    events.append({"type": "message_stop"})
    return events


def chunks_of(events: list[dict[str, Any]]) -> list[bytes]:
    """Anthropic events as InvokeModelWithResponseStream sends them: one `chunk` frame
    each, `{"bytes": base64 of the event}`, Bedrock's metrics on `message_stop`."""
    frames = []
    for item in events:
        if item["type"] == "message_stop":
            item = {**item, "amazon-bedrock-invocationMetrics": METRICS}
        data = base64.b64encode(json.dumps(item, separators=(",", ":")).encode()).decode()
        frames.append(event("chunk", {"bytes": data}))
    return frames


def exception_frame(kind: str, message: str) -> bytes:
    headers = {":exception-type": kind, ":content-type": "application/json",
               ":message-type": "exception"}  # fmt: skip
    return frame(headers, json.dumps({"message": message}).encode())


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    chunks: list[bytes]
    headers: dict[str, str] = field(default_factory=dict)


def invoke_answer(corpus: Path, path: str, body: dict[str, Any]) -> Answer:
    """What Bedrock answers an InvokeModel call (`…/invoke-with-response-stream` streams)."""
    streamed = path.split("?")[0].endswith("/invoke-with-response-stream")
    if "inputText" in body:  # a Titan body, Titan's answer
        return Answer(200, "application/json", [json.dumps(TITAN_ANSWER).encode()])
    said = json.dumps(body.get("messages", []))
    if "INVALID" in said:
        kind = "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
        return Answer(400, "application/json", [json.dumps({"message": INVALID}).encode()],
                      {"x-amzn-errortype": kind})  # fmt: skip
    finished = '"tool_result"' in said
    if not streamed:
        answer = INVOKE_FINAL if finished else first_answer(corpus)
        return Answer(200, "application/json", [json.dumps(answer).encode()])
    events = message_events(INVOKE_FINAL) if finished else first_events(corpus)
    if "THROTTLE" in said:
        frames = [*chunks_of(events[:2]), exception_frame("throttlingException", THROTTLED)]
        return Answer(200, "application/vnd.amazon.eventstream", frames)
    return Answer(200, "application/vnd.amazon.eventstream", chunks_of(events))


# -- the TLS server --------------------------------------------------------------------------
def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for HOST and 127.0.0.1 (the test's daphne trusts it
    through INSPECTOR_UPSTREAM_CA_BUNDLE)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.DNSName(HOST), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    built = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "bedrock-standin.pem", folder / "bedrock-standin.key"
    cert_path.write_bytes(built.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@dataclass
class Call:
    """One call the stand-in got: what it was sent and whether its signature held."""

    path: str
    host: str
    headers: dict[str, str]
    body: dict[str, Any]
    signature: str
    signature_valid: bool


@dataclass
class BedrockStandIn:
    base: str
    cert: Path
    calls: list[Call] = field(default_factory=list)


def authorized(method: str, path: str, headers: dict[str, str], body: bytes) -> bool:
    """A valid SigV4 signature, or the Bedrock API key."""
    if headers.get("authorization") == f"Bearer {BEARER_KEY}":
        return True
    return signature_valid(method, path, headers, body)


def signature_valid(method: str, path: str, headers: dict[str, str], body: bytes) -> bool:
    """Whether the Authorization header's signature is the one AWS would compute for this
    request as received: botocore's SigV4 signer over the headers it names."""
    found = AUTHORIZATION.fullmatch(headers.get("authorization", ""))
    if found is None or found["key"] != ACCESS_KEY:
        return False
    signed = found["signed"].split(";")
    request = AWSRequest(
        method=method,
        url=f"https://{headers.get('host', '')}{path}",
        headers={name: headers.get(name, "") for name in signed},
        data=body,
    )
    request.context["timestamp"] = headers.get("x-amz-date", "")
    signer = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY, SESSION_TOKEN), "bedrock", "us-east-1")
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    return expected == found["signature"]


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    """The tool-use turn, or the final one once the tool's result is in the messages."""
    results = [
        block["toolResult"]
        for message in body.get("messages", [])
        for block in message.get("content", [])
        if "toolResult" in block
    ]
    return FINAL_TURN if any(r.get("toolUseId") == TOOL_USE_ID for r in results) else FIRST_TURN


@contextmanager
def bedrock_standin(folder: Path, port: int = 0, corpus: Path = CORPUS) -> Iterator[BedrockStandIn]:
    cert_path, key_path = certificate(folder)
    standin = BedrockStandIn("", cert_path)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            found = AUTHORIZATION.fullmatch(headers.get("authorization", ""))
            body = json.loads(raw or b"{}")
            standin.calls.append(
                Call(
                    self.path,
                    headers.get("host", ""),
                    headers,
                    body,
                    found["signature"] if found else "",
                    authorized("POST", self.path, headers, raw),
                )
            )
            if not standin.calls[-1].signature_valid:
                self._send(403, "application/json", [b'{"message":"The request signature '
                           b'we calculated does not match the signature you provided."}'])  # fmt: skip
                return
            route = self.path.split("?")[0]
            if route.endswith(("/invoke", "/invoke-with-response-stream")):
                answer = invoke_answer(corpus, self.path, body)
                self._send(answer.status, answer.content_type, answer.chunks, answer.headers)
                return
            turn = _answer(body)
            if route.endswith("/converse-stream"):
                self._send(200, "application/vnd.amazon.eventstream", stream_of(turn))
            else:
                self._send(200, "application/json", [json.dumps(turn).encode()])

        def _send(
            self,
            status: int,
            content_type: str,
            chunks: list[bytes],
            headers: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("x-amzn-requestid", "8f0f6f0e-0000-4000-8000-standin00001")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    standin.base = f"https://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
