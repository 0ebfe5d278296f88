"""The forward proxy in one hop (issue 23): mitmdump calls the upstream itself and hands
the finished exchange to `/api/forward/exchanges`, which records it with the reverse
proxy's own code.

The same call made through the forward proxy and through the reverse proxy is stored as
the same line (timestamps apart); the call reached the upstream from mitmdump, not from
daphne (the header names as the client spelt them: the reverse proxy's Django names
them `X-Case-Probe`). A hand-over that fails leaves the client's call untouched and is
logged without a secret. The routing decision itself (`forward_direct.Routes`) is
checked against the reverse proxy's URL building.
"""

from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import orjson
import pytest

from tests.capture.scenario import SECRET, ports
from tests.capture.test_forward_proxy import mitmdump  # noqa: F401 (a fixture)
from tests.capture.test_proxy_edges import assert_nowhere
from traces.capture import forward_exchange
from traces.capture.bedrock_route import bedrock_target
from traces.capture.forward_direct import Routes
from traces.capture.forward_proxy import CONFDIR, ROUTES, forward_proxy
from traces.capture.forwarded import routes as server_routes
from traces.core.reading import capture

pytestmark = pytest.mark.corpus

GEMINI_KEY = "AIzaSyForwardOneHopKey0123456789abcdefg"
BODY = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": []}


def _line(server, session: str) -> dict:
    trace_id = server.trace_id(f"proxy:anthropic-messages:{session}")
    server.wait_report(trace_id, calls=1)
    (line,) = server.get(f"/traces/{trace_id}/download").splitlines()
    return orjson.loads(line)


def _without_times(line: dict) -> dict:
    line["request"].pop("timestamp")
    line["response"].pop("timestamp")
    line["response"]["headers"].pop("date")  # the fake upstream's clock, per answer
    return line


def test_a_forwarded_call_is_stored_as_the_reverse_proxy_stores_it(
    inspector_server,
    upstream,
    mitmdump,  # noqa: F811 (the fixture)
    tmp_path,
):
    headers = {"x-api-key": SECRET, "anthropic-version": "2023-06-01", "x-case-probe": "1"}
    before = len(upstream.received)
    with forward_proxy(
        server=inspector_server.base,
        session="one-hop",
        data_dir=tmp_path,
        environ={"INSPECTOR_MITMDUMP": mitmdump},
        one_hop=True,
    ) as proxy:
        assert (tmp_path / CONFDIR / ROUTES).is_file()  # the server gave its routes
        trust = ssl.create_default_context(cafile=str(proxy.bundle))
        with httpx.Client(proxy=proxy.url, verify=trust, trust_env=False) as client:
            forwarded = client.post(
                "https://api.anthropic.com/v1/messages?beta=true", json=BODY, headers=headers
            )
        log = proxy.log
    assert forwarded.status_code == 200 and forwarded.content == upstream.sent[-1]
    (received,) = upstream.received[before:]
    assert "x-case-probe" in received.headers  # mitmdump's request, not daphne's
    assert received.headers["x-api-key"] == SECRET  # the key went on as sent
    assert received.path == "/v1/messages?beta=true"
    with httpx.Client(trust_env=False) as client:
        reversed_ = client.post(
            f"{inspector_server.base}/proxy/s/two-hop/anthropic/v1/messages?beta=true",
            json=BODY,
            headers=headers,
        )
    assert reversed_.content == forwarded.content
    one, two = _line(inspector_server, "one-hop"), _line(inspector_server, "two-hop")
    assert one["request"]["headers"]["X-Api-Key"] == "[masked]"
    assert _without_times(one) == _without_times(two)
    assert_nowhere(inspector_server, [SECRET.encode()], logs=log.read_bytes())


def test_a_key_in_the_query_is_masked_before_it_leaves_mitmdump():
    rule = forward_exchange.SecretRule.of(_routes()["secret_rule"])
    query = f"alt=sse&key={GEMINI_KEY}"
    masked = rule.masked_query(query)
    assert GEMINI_KEY not in masked
    url = capture.upstream_url("https://g.example", "v1beta/models/m:streamGenerateContent", query)
    again = capture.upstream_url(
        "https://g.example", "v1beta/models/m:streamGenerateContent", masked
    )
    assert capture.safe_url(url) == capture.safe_url(again)  # the same recorded URL
    pairs = [("x-goog-api-key", GEMINI_KEY), ("Authorization", "Bearer sk-x"), ("X-Amz-Date", "d")]
    pairs += [("anthropic-version", "2023-06-01")]
    assert rule.masked_headers(pairs) == [
        ("x-goog-api-key", "[masked]"),
        ("Authorization", "[masked]"),
        ("X-Amz-Date", "[masked]"),
        ("anthropic-version", "2023-06-01"),
    ]


def test_the_endings_are_the_cores_outcomes():
    assert forward_exchange.CLIENT_LEFT == capture.CLIENT_LEFT
    assert forward_exchange.UPSTREAM_BROKE_OFF == capture.UPSTREAM_BROKE_OFF
    assert forward_exchange.UPSTREAM_UNREACHABLE == capture.UPSTREAM_UNREACHABLE


def test_a_hand_over_round_trips_and_a_damaged_one_is_refused():
    data = forward_exchange.encode({"vendor": "openai"}, b"\x00req\n", b"answer")
    meta, sent, answer = forward_exchange.decode(data)
    assert (meta["vendor"], sent, answer) == ("openai", b"\x00req\n", b"answer")
    for damaged in (
        data[:-1],
        b"not json\n",
        b"[]\n",
        data.replace(b'"response_bytes":6', b'"response_bytes":-1'),
    ):
        with pytest.raises(ValueError):
            forward_exchange.decode(damaged)


# -- the routing decision ------------------------------------------------------------------
def _routes(**upstreams: str) -> dict:
    from django.test import override_settings

    names = {f"INSPECTOR_UPSTREAM_{vendor.upper()}": base for vendor, base in upstreams.items()}
    with override_settings(**names):
        return server_routes()


def test_the_one_hop_goes_where_the_reverse_proxy_would():
    routes = Routes.of(
        _routes(
            openai="http://127.0.0.1:9/v1",
            anthropic="https://api.anthropic.com",
            bedrock="https://127.0.0.1:8443",
        )
    )
    target = routes.target("openai", "api.openai.com", "POST", "/v1/chat/completions?x=1", 10, {})
    assert target is not None
    assert (target.scheme, target.host, target.port, target.host_header) == (
        "http", "127.0.0.1", 9, "127.0.0.1:9"
    )  # fmt: skip
    expected = capture.upstream_url("http://127.0.0.1:9/v1", "chat/completions", "x=1")
    assert f"http://127.0.0.1:9{target.path}" == expected
    anthropic = routes.target("anthropic", "api.anthropic.com", "POST", "/v1/messages", 1, {})
    assert anthropic is not None and anthropic.host_header == "api.anthropic.com"
    path = "/model/us.anthropic.claude-sonnet-4-6-v1%3A0/converse"
    host = "bedrock-runtime.us-east-1.amazonaws.com"
    bedrock = routes.target("bedrock", host, "POST", "/us-east-1" + path, 1, {})
    assert bedrock is not None and bedrock.path == path and bedrock.host_header == host
    signed = bedrock_target(
        "https://127.0.0.1:8443", "us-east-1" + path, "/proxy/bedrock/us-east-1" + path, ""
    )
    assert not isinstance(signed, str) and signed.url == "https://127.0.0.1:8443" + path


@pytest.mark.parametrize(
    ("method", "path", "size", "headers"),
    [
        ("PUT", "/v1/chat/completions", 1, {}),  # the reverse proxy refuses it (405)
        ("POST", "/chat/completions", 1, {}),  # not under /v1: its hint
        ("POST", "/v1/a/../chat/completions", 1, {}),  # re-escaped there
        ("POST", "/v1/chat%2Fcompletions", 1, {}),
        ("POST", "/v1/chat/completions", 32 * 1024 * 1024 + 1, {}),  # 413 there
        ("POST", "/v1/chat/completions", 1, {"content-length": str(64 * 1024 * 1024)}),
        ("POST", "/v1/chat/completions", 1, {"authorization": "Bearer li_ours"}),
    ],
)
def test_what_the_reverse_proxy_answers_itself_takes_the_two_hops(method, path, size, headers):
    routes = Routes.of(_routes(openai="http://127.0.0.1:9/v1"))
    assert routes.target("openai", "api.openai.com", method, path, size, headers) is None


def test_an_unconfigured_vendor_or_a_bad_session_takes_the_two_hops():
    routes = Routes.of(_routes(gemini=""))
    assert routes.target("gemini", "x", "POST", "/v1beta/models/m:generateContent", 1, {}) is None
    assert routes.session_of("", "bad name!") is None
    assert routes.session_of("", "") == "" and routes.session_of("s1", "other") == "s1"


# -- a hand-over that fails ----------------------------------------------------------------
@pytest.fixture
def refusing_server(upstream):
    """A stand-in of Loop Inspector that gives its routes (to the fake upstream) and
    fails every hand-over (HTTP 500), remembering what it was sent."""
    routes = json.dumps(_routes(anthropic=upstream.base)).encode()
    posted: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer(200, routes)

        def do_POST(self) -> None:
            posted.append(self.rfile.read(int(self.headers["content-length"])))
            self._answer(500, b'{"error": "broken"}')

    server = ThreadingHTTPServer(("127.0.0.1", ports()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", posted
    finally:
        server.shutdown()


def test_a_failed_hand_over_leaves_the_call_alone_and_is_logged_without_secrets(
    refusing_server,
    upstream,
    mitmdump,  # noqa: F811 (the fixture)
    tmp_path,
):
    base, posted = refusing_server
    with forward_proxy(
        server=base,
        session="broken",
        data_dir=tmp_path,
        environ={"INSPECTOR_MITMDUMP": mitmdump},
        one_hop=True,
    ) as proxy:
        trust = ssl.create_default_context(cafile=str(proxy.bundle))
        with httpx.Client(proxy=proxy.url, verify=trust, trust_env=False) as client:
            replies = [
                client.post(
                    "https://api.anthropic.com/v1/messages",
                    json=BODY,
                    headers={"x-api-key": SECRET, "anthropic-version": "2023-06-01"},
                )
                for _ in range(2)
            ]
        log = proxy.log
    assert [r.status_code for r in replies] == [200, 200]
    assert replies[-1].content == upstream.sent[-1]
    assert len(posted) == 2  # both handed over (mitmdump waited for them as it stopped)
    for data in posted:
        meta, _, _ = forward_exchange.decode(data)
        assert SECRET.encode() not in data
        assert dict(meta["headers"])["x-api-key"] == "[masked]"
    logged = log.read_bytes()
    assert b"did not record a call to anthropic (HTTP 500)" in logged
    assert SECRET.encode() not in logged


def test_an_upstream_with_a_password_in_its_url_is_not_handed_out(settings):
    """The routes go to the forward proxy: a base URL holding a user and password (a
    gateway's basic auth) stays on the server, and that vendor takes the two hops."""
    from traces.capture.forwarded import routes

    settings.INSPECTOR_UPSTREAM_ANTHROPIC = "https://user:s3cret-pass@gateway.example/anthropic"
    settings.INSPECTOR_UPSTREAM_OPENAI = "https://api.openai.com"
    given = routes()
    assert given["upstreams"]["anthropic"]["base"] == ""
    assert "s3cret-pass" not in json.dumps(given)
    assert given["upstreams"]["openai"]["base"] == "https://api.openai.com"
