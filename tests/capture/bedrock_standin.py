"""A local TLS stand-in of bedrock-runtime.us-east-1.amazonaws.com for the forward proxy's
Bedrock tests: it checks each call's SigV4 signature as AWS would (with botocore's own
signer, over the path, Host and headers it received), and answers a weather agent's two
turns (a tool use, then the final answer) as Converse JSON or as a ConverseStream AWS
event stream.

botocore has an event-stream parser but no encoder, so `frame` writes frames as the AWS
spec says: prelude (total and headers length, big-endian), its CRC32, typed headers,
payload, and the message's CRC32. tests/capture/test_forward_proxy_bedrock.py checks it
against a ConverseStream recorded from AWS (byte for byte) and botocore's parser.
"""

from __future__ import annotations

import datetime
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
def bedrock_standin(folder: Path, port: int = 0) -> Iterator[BedrockStandIn]:
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
                    signature_valid("POST", self.path, headers, raw),
                )
            )
            if not standin.calls[-1].signature_valid:
                self._send(403, "application/json", [b'{"message":"The request signature '
                           b'we calculated does not match the signature you provided."}'])  # fmt: skip
                return
            turn = _answer(body)
            if self.path.split("?")[0].endswith("/converse-stream"):
                self._send(200, "application/vnd.amazon.eventstream", stream_of(turn))
            else:
                self._send(200, "application/json", [json.dumps(turn).encode()])

        def _send(self, status: int, content_type: str, chunks: list[bytes]) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
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
