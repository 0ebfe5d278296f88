"""The one redaction rule: every name and value shape it knows, and what it must leave.

Each detector is tried in the shape traces record it (JSON member, escaped JSON inside a
string, header container, HAR and OTLP pairs, VCR YAML, URL query, free text), with
near-misses that are not secrets and that readers need.
"""

from __future__ import annotations

import gzip
import io
import zipfile

import orjson
import pytest

from traces.core.reading.credentials import MASK, mask_secrets, mask_text
from traces.core.reading.limits import InputRejected, Limits
from traces.core.reading.redact import redact
from traces.core.reading.secret_rule import secret_field, secret_name
from traces.core.reading.upload_redaction import DROPPED, redact_upload

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAplanted\nZZZbody\n-----END RSA PRIVATE KEY-----"
SHAPES = {
    "Loop Inspector token": "li_" + "A1b2C3d4" * 5 + "xyz",
    "JWT": JWT,
    "Stripe key": "sk_live_51Habcdefghijklmnop",
    "Hugging Face token": "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "GitLab token": "glpat-abcdefghij0123456789",
    "sk- API key": "sk-ant-api03-abcdefghijklmnop0123",
    "AWS access key": "AKIAIOSFODNN7EXAMPLE",
    "GitHub token": "ghp_" + "a1B2c3D4e5" * 4,
    "Google API key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "Slack token": "xoxb-1234567890-abcdefghij",
}
"""Value shapes found anywhere, even in a message's text."""


def redacted_text(data: bytes) -> bytes:
    result = redact(data)
    assert result.data.count(b"\n") == data.count(b"\n")  # line numbers still hold
    assert redact(result.data).fields == {}  # twice is once
    return result.data


@pytest.mark.parametrize("label", sorted(SHAPES))
def test_each_value_shape_is_redacted_in_text_and_masked_on_pages(label):
    secret = SHAPES[label]
    line = orjson.dumps({"text": f"here: {secret} (done)"}) + b"\n"
    result = redact(line)
    assert secret.encode() not in result.data
    assert orjson.loads(result.data) == {"text": "here: [redacted] (done)"}
    assert result.fields == {label: 1}
    assert mask_text(f"see {secret}.") == f"see {MASK}."


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==", "curl -H 'Authorization: "),
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_SECRET_ACCESS_KEY=",
        ),
        (
            "aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key: ",
        ),
        ("export PASSWORD=hunter2hunter2", "export PASSWORD="),
        ("client_secret=abcd1234efgh", "client_secret="),
        ("Basic dXNlcjpwYXNzd29yZA==", ""),
        ("x-api-key: k-0123456789", "x-api-key: "),
    ],
)
def test_credentials_in_commands_and_settings_keep_their_names(text, kept):
    result = redact(orjson.dumps({"command": text}))
    assert orjson.loads(result.data)["command"] == kept + "[redacted]"
    assert mask_text(text) == kept + MASK


def test_a_pem_private_key_is_redacted_and_its_lines_stay():
    data = f"before\n{PEM}\nafter\n".encode()
    out = redacted_text(data)
    assert b"MIIE" not in out and b"PRIVATE KEY" not in out
    assert out.startswith(b"before\n[redacted]") and out.endswith(b"\nafter\n")
    inside_json = orjson.dumps({"output": PEM})
    assert b"MIIE" not in redact(inside_json).data


@pytest.mark.parametrize(
    "text",
    [
        "the basic idea is simple",
        "Basic authentication is configured",
        "sha1 3f786850e387550fdab836ed7e6dc881de23001b and sha256 "
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "data:image/png;base64,iVBORw0KGgo=",
        "sk-short and li_short and hf_short and eyJhbGci alone",
        "the token budget: max_tokens=1024, input_tokens: 12",
        "session_id=abc-123 sessionId: u-1",
        "Bearer short",
        "ordinary words: key, token, secret, password are just words here",
        "a path src/session/session-discovery.ts and @aws-sdk/credential-providers",
    ],
)
def test_near_misses_are_left_alone(text):
    data = orjson.dumps({"text": text, "max_tokens": 100, "sessionId": "u-1"}) + b"\n"
    assert redact(data).data == data
    assert mask_text(text) == text


def test_field_names_anywhere_in_plain_and_escaped_json():
    arguments = orjson.dumps({"user": "bob", "password": "hunter2", "client_secret": 'c"s'})
    record = {
        "tool_use": {"input": {"password": "pw-1", "access_token": "at-1", "apiKey": "ak-1"}},
        "function": {"arguments": arguments.decode()},
        "usage": {"input_tokens": 5, "max_tokens": 9},
        "token": "Hello",  # an OpenAI logprobs entry: not a credential
        "session_id": "s-1",
        "sessionId": "s-2",
    }
    out = orjson.loads(redacted_text(orjson.dumps(record)))
    assert out["tool_use"]["input"] == {
        "password": "[redacted]",
        "access_token": "[redacted]",
        "apiKey": "[redacted]",
    }
    assert orjson.loads(out["function"]["arguments"]) == {
        "user": "bob",
        "password": "[redacted]",
        "client_secret": "[redacted]",
    }
    assert out["usage"] == record["usage"] and out["token"] == "Hello"
    assert out["session_id"] == "s-1" and out["sessionId"] == "s-2"
    assert mask_secrets(record)["tool_use"]["input"]["password"] == MASK
    assert mask_secrets(record)["session_id"] == "s-1"


HEADER_NAMES = [
    "Authorization",
    "x-api-key",
    "x-amz-security-token",
    "x-auth-token",
    "x-litellm-api-key",
    "private-token",
    "Ocp-Apim-Subscription-Key",
    "Cookie",
    "X-Custom-Session-Token",
]
KEPT_HEADERS = {
    "x-request-id": "req-1",
    "anthropic-ratelimit-tokens-remaining": "8000",
    "x-session-id": "sid-1",
    "llm.token_count.prompt": "12",
}


def test_every_header_shape_is_redacted_and_masked():
    values = {name: f"v{n}-secret-value" for n, name in enumerate(HEADER_NAMES)}
    record = {
        "headers": {**values, **KEPT_HEADERS, "Session": "sess-cookie"},
        "har": {"headers": [{"name": n, "value": v} for n, v in values.items()]},
        "pairs": [[n, v] for n, v in values.items() if "-" in n or n == "Authorization"],
        "attributes": {f"http.request.header.{n.lower()}": [v] for n, v in values.items()},
        "otlp": [
            {"key": f"http.request.header.{n.lower()}", "value": {"stringValue": v}}
            for n, v in values.items()
        ]
        + [{"key": "session.id", "value": {"stringValue": "sid-2"}}],
        "url": "https://x.example/v1/models?key=qk-1&api_key=qk-2&alt=sse&session_id=sid-3",
    }
    data = orjson.dumps(record)
    out = redacted_text(data)
    for value in [*values.values(), "sess-cookie", "qk-1", "qk-2"]:
        assert value.encode() not in out, value
    for value in [*KEPT_HEADERS.values(), "sid-2", "sid-3", "alt=sse"]:
        assert value.encode() in out, value
    shown = orjson.dumps(mask_secrets(record))
    for value in [*values.values(), "qk-1", "qk-2"]:
        assert value.encode() not in shown, value
    for value in ["req-1", "8000", "sid-1", "sid-2", "sid-3"]:
        assert value.encode() in shown, value


def test_vcr_yaml_list_items_and_lines():
    data = (
        b"interactions:\n- request:\n    headers:\n"
        b"      Authorization:\n      - Bearer test_openai_api_key_123\n"
        b"      accept:\n      - application/json\n"
        b"      x-api-key:\n      - plain-yaml-key\n"
        b"      Set-Cookie:\n      - __cf_bm=aaa; path=/\n      - _cfuvid=bbb; path=/\n"
        b"      openai-organization: my-org\n"
        b"    uri: https://api.openai.com/v1/chat?key=yk-1\n"
    )
    out = redacted_text(data)
    for secret in (
        b"test_openai_api_key_123",
        b"plain-yaml-key",
        b"aaa",
        b"bbb",
        b"my-org",
        b"yk-1",
    ):
        assert secret not in out
    assert b"      - application/json\n" in out and out.count(b"[redacted]") == 6


def test_the_existing_guarantee_only_the_secret_spans_change():
    data = (
        b'{"headers": {"Authorization": "Bearer abc.def-123456789", "x-api-key": "k\\"ey"}, '
        b'"body": {"text": "my key is sk-proj-0123456789abcdefghij ok"}}\n'
        b"  authorization: Bearer sk-ant-0123456789abcdefgh\n"
        b"plain line\n"
    )
    assert redacted_text(data) == (
        b'{"headers": {"Authorization": "[redacted]", "x-api-key": "[redacted]"}, '
        b'"body": {"text": "my key is [redacted] ok"}}\n'
        b"  authorization: [redacted]\n"
        b"plain line\n"
    )


def test_names_by_the_rule():
    assert secret_name("X-Amz-Security-Token") and secret_name("http.request.header.cookie")
    assert not secret_name("anthropic-ratelimit-tokens-remaining")
    assert not secret_name("session.id") and not secret_name("x-session-id")
    assert secret_field("clientSecret") and secret_field("X_API_KEY")
    assert not secret_field("max_tokens") and not secret_field("token")
    assert not secret_field("src/session-discovery.ts")


# -- whole uploads -------------------------------------------------------------------------
KEY = SHAPES["sk- API key"]
LINE = orjson.dumps({"headers": {"x-api-key": KEY}, "text": f"key {KEY}"}) + b"\n"


def test_a_gzip_upload_is_decoded_then_redacted():
    name, result = redact_upload("trace.jsonl.gz", gzip.compress(LINE * 3))
    assert name == "trace.jsonl"
    assert result.data == redact(LINE * 3).data and KEY.encode() not in result.data
    assert result.fields == {"x-api-key": 3, "sk- API key": 3}


def test_a_gzip_bomb_is_refused_by_the_same_limits():
    bomb = gzip.compress(b"\n" * (8 * 1024 * 1024))
    with pytest.raises(InputRejected, match="decompression bomb"):
        redact_upload("bomb.gz", bomb, Limits(max_decompressed_bytes=1024 * 1024))


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, content in members.items():
            bundle.writestr(name, content)
    return buffer.getvalue()


def test_a_zip_has_its_members_redacted_and_nested_archives_too():
    inner = zip_of({"samples/1_epoch_1.json": LINE})
    data = zip_of({"a.jsonl": LINE, "b.jsonl.gz": gzip.compress(LINE), "logs.eval": inner})
    name, result = redact_upload("bundle.zip", data)
    assert name == "bundle.zip"
    with zipfile.ZipFile(io.BytesIO(result.data)) as bundle:
        members = {info.filename: bundle.read(info) for info in bundle.infolist()}
    assert set(members) == {"a.jsonl", "b.jsonl", "logs.eval"}
    assert members["a.jsonl"] == members["b.jsonl"] == redact(LINE).data
    with zipfile.ZipFile(io.BytesIO(members["logs.eval"])) as nested:
        assert nested.read("samples/1_epoch_1.json") == redact(LINE).data
    assert result.fields == {"x-api-key": 3, "sk- API key": 3}
    assert redact_upload("bundle.zip", data)[1].data == result.data  # the same bytes again


def test_a_zip_member_that_cannot_be_read_is_not_kept():
    data = bytearray(zip_of({"a.jsonl": LINE, "b.jsonl": LINE}))
    data[data.index(b"b.jsonl") + 7 + 1] ^= 0xFF  # damage b's compressed bytes
    _, result = redact_upload("bundle.zip", bytes(data))
    with zipfile.ZipFile(io.BytesIO(result.data)) as bundle:
        assert bundle.namelist() == ["a.jsonl"]
    assert result.fields[DROPPED] == 1 and KEY.encode() not in result.data


def test_an_archive_without_credentials_is_kept_as_it_came():
    data = zip_of({"a.jsonl": b'{"text": "nothing secret"}\n'})
    assert redact_upload("a.zip", data)[1].data == data
