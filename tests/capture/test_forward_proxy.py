"""The forward proxy (issue 23, item 7): agents that cannot be pointed elsewhere.

`manage.py record --forward -- CMD` runs the real anthropic and openai SDKs, unconfigured
(their own https://api.anthropic.com and https://api.openai.com), trusting the local CA
only through the environment the command gives the child: their calls are recorded by
the reverse proxy and answered by the fake upstream it points at. A host that is not a
vendor's (a local TLS server reached through CONNECT) is tunnelled untouched: the client
sees that server's own certificate and nothing is recorded. No key is stored, shown or
logged, mitmdump's own output included.

mitmdump runs from its own environment (`make forward`'s .venv-forward, or
INSPECTOR_MITMDUMP): without it these tests skip, and under CI=true they fail.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import signal
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.capture.scenario import OPENAI_SECRET, SECRET, ports
from tests.capture.test_commands import manage
from tests.capture.test_proxy_edges import assert_nowhere
from tests.live.servers import ROOT, server_env
from traces.capture.forward_addon import VENDOR_HOSTS, allow_patterns, routed_path
from traces.capture.forward_proxy import (
    ForwardProxyUnavailable,
    child_environment,
    forward_proxy,
    free_port,
    mitmdump_path,
)

pytestmark = pytest.mark.corpus

AGENT = (
    textwrap.dedent(
        """
    import anthropic, openai
    claude = anthropic.Anthropic(api_key="ANTHROPIC_KEY", max_retries=0)  # its own host
    messages = [{"role": "user", "content": "Weather and time in New York?"}]
    first = claude.messages.create(model="claude-sonnet-4-6", max_tokens=512, messages=messages)
    print("anthropic", claude.base_url, first.stop_reason)
    gpt = openai.OpenAI(api_key="OPENAI_KEY", max_retries=0)
    stream = gpt.chat.completions.create(
        model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": "weather?"}]
    )
    chunks = sum(1 for _ in stream)
    print("openai", gpt.base_url, chunks, "chunks")
    router = openai.OpenAI(
        api_key="OPENAI_KEY", base_url="https://openrouter.ai/api/v1", max_retries=0
    )
    routed = router.chat.completions.create(
        model="openai/gpt-4o-mini", messages=[{"role": "user", "content": "weather?"}]
    )
    print("openrouter", router.base_url, routed.choices[0].finish_reason)
    """
    )
    .replace("ANTHROPIC_KEY", SECRET)
    .replace("OPENAI_KEY", OPENAI_SECRET)
)


def _cannot_run(reason: str) -> None:
    """Skip with the reason; in CI (.ci/run sets CI=true) fail instead, so the forward
    proxy's tests cannot silently stop running there."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def mitmdump() -> str:
    try:
        return mitmdump_path()
    except ForwardProxyUnavailable as exc:
        _cannot_run(str(exc))
        raise


def test_a_missing_mitmdump_says_how_to_install_it(tmp_path):
    with pytest.raises(ForwardProxyUnavailable) as raised:
        mitmdump_path({"INSPECTOR_MITMDUMP": str(tmp_path / "nowhere"), "PATH": ""})
    message = str(raised.value)
    assert "is not an executable file" in message
    assert "pipx install mitmproxy==11.0.2" in message and "make forward" in message


def test_record_forward_without_mitmdump_fails_clearly(inspector_server, tmp_path):
    env = server_env(
        DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3",
        REDIS_URL="",
        INSPECTOR_MITMDUMP=str(tmp_path / "no-mitmdump"),
    )
    done = manage(
        "record", "--server", inspector_server.base, "--forward", "--", "true", env=env,
    )  # fmt: skip
    assert done.returncode != 0
    assert "is not an executable file" in done.stderr and "pipx install" in done.stderr
    assert "Traceback" not in done.stderr
    done = manage("proxy", "--server", inspector_server.base, env=env)
    assert done.returncode != 0 and "Say --forward" in done.stderr


def test_the_vendor_hosts_are_routed_to_their_reverse_proxy_paths():
    assert routed_path("anthropic", "s1", "/v1/messages?beta=true") == (
        "/proxy/s/s1/anthropic/v1/messages?beta=true"
    )
    assert routed_path("openai", "", "/v1/chat/completions") == "/proxy/openai/v1/chat/completions"
    assert allow_patterns() == [
        "^api\\.anthropic\\.com:443$",
        "^api\\.openai\\.com:443$",
        "^generativelanguage\\.googleapis\\.com:443$",
        "^openrouter\\.ai:443$",
        "^bedrock-runtime\\.([a-z]{2}(?:-[a-z]+)+-\\d{1,2})\\.amazonaws\\.com:443$",
    ]
    assert set(VENDOR_HOSTS.values()) == {"anthropic", "openai", "gemini", "openrouter"}
    assert routed_path("openrouter", "", "/api/v1/chat/completions") == (
        "/proxy/openrouter/api/v1/chat/completions"
    )


def record_env(tmp_path: Path, mitmdump: str, **extra: str) -> dict[str, str]:
    """The environment of `record --forward` run as a user would: no database of its own
    (it talks to the server over HTTP), no base URL, proxy or CA bundle of the test's."""
    return server_env(
        DATABASE_URL=f"sqlite:///{tmp_path}/missing/db.sqlite3",
        REDIS_URL="",
        INSPECTOR_DATA_DIR=str(tmp_path / "record-data"),
        INSPECTOR_MITMDUMP=mitmdump,
        ANTHROPIC_BASE_URL="",
        OPENAI_BASE_URL="",
        HTTPS_PROXY="",
        https_proxy="",
        SSL_CERT_FILE="",
        **extra,
    )


def test_record_forward_records_sdks_calling_their_own_hosts(
    inspector_server, upstream, mitmdump, tmp_path
):
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    data_dir = tmp_path / "record-data"
    env = record_env(tmp_path, mitmdump)
    before = len(upstream.received)
    done = manage(
        "record", "--server", inspector_server.base, "--session", "forwarded", "--forward",
        "--", sys.executable, str(script), env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "anthropic https://api.anthropic.com tool_use" in done.stdout
    assert "openai https://api.openai.com/v1/" in done.stdout
    assert "forward proxy http://127.0.0.1:" in done.stdout
    assert "anthropic-messages, 1 calls" in done.stdout
    assert "openrouter https://openrouter.ai/api/v1/" in done.stdout
    assert "openai-chat, 2 calls" in done.stdout  # OpenAI's and OpenRouter's, one shape
    received = upstream.received[before:]
    assert [r.path.split("?")[0] for r in received] == [
        "/v1/messages",
        "/v1/chat/completions",
        "/api/v1/chat/completions",  # OpenRouter's, to INSPECTOR_UPSTREAM_OPENROUTER
    ]
    forwarded = {k.lower(): v for k, v in received[0].headers.items()}
    credential = forwarded.get("x-api-key") or forwarded.get("authorization", "")
    assert credential.removeprefix("Bearer ") == SECRET  # forwarded as the SDK sent it
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:forwarded")
    (call,) = inspector_server.wait_report(trace_id, calls=1)["calls"]
    assert call["status"] == "ok"
    chat = inspector_server.trace_id("proxy:openai-chat:forwarded")
    assert len(inspector_server.wait_report(chat, calls=2)["calls"]) == 2

    confdir = data_dir / "forward-proxy"
    assert (confdir / "mitmproxy-ca-cert.pem").is_file()  # generated on first use, there
    assert oct((confdir).stat().st_mode & 0o777) == "0o700"
    assert_nowhere(
        inspector_server,
        [SECRET.encode(), OPENAI_SECRET.encode()],
        folders=(confdir,),
        logs=done.stdout.encode() + done.stderr.encode(),
    )


# -- a host that is not a vendor's -------------------------------------------------------
def self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "own.pem", folder / "own.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def peer_certificate(proxy_url: str, port: int, context: ssl.SSLContext) -> bytes:
    """The certificate a client sees through the proxy's CONNECT tunnel to localhost:port."""
    proxy_port = int(proxy_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", proxy_port), timeout=10) as raw:
        raw.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += raw.recv(1024)
        assert answer.startswith(b"HTTP/1.1 200"), answer
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.getpeercert(binary_form=True)


@pytest.fixture
def own_tls_server(tmp_path):
    """A TLS server with its own self-signed certificate, on a loopback port."""
    cert_path, key_path = self_signed(tmp_path)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = b"answered by its own server"
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", ports()), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], cert_path
    finally:
        server.shutdown()


def test_another_host_is_tunnelled_untouched_and_unrecorded(
    inspector_server, upstream, mitmdump, own_tls_server, tmp_path
):
    port, cert_path = own_tls_server
    before = len(upstream.received)
    with forward_proxy(
        server=inspector_server.base,
        session="tunnelled",
        data_dir=tmp_path,
        environ={"INSPECTOR_MITMDUMP": mitmdump},
    ) as proxy:
        env = child_environment(proxy, {"NO_PROXY": "intranet.example"})
        assert env["HTTPS_PROXY"] == proxy.url and env["SSL_CERT_FILE"] == str(proxy.bundle)
        assert env["NO_PROXY"] == "intranet.example,localhost,127.0.0.1,::1"
        # Trusting that server's certificate alone: the handshake proves it is its own.
        own_only = ssl.create_default_context(cafile=str(cert_path))
        with httpx.Client(proxy=proxy.url, verify=own_only, trust_env=False) as client:
            reply = client.post(
                f"https://localhost:{port}/v1/messages",
                json={"model": "claude-sonnet-4-6"},
                headers={"x-api-key": SECRET},
            )
        assert reply.text == "answered by its own server"
        assert peer_certificate(proxy.url, port, own_only) == ssl.PEM_cert_to_DER_cert(
            cert_path.read_text()
        )
        # Trusting the local CA alone, the same call fails: its TLS is not intercepted.
        ca_only = ssl.create_default_context(cafile=str(proxy.ca_cert))
        with (
            httpx.Client(proxy=proxy.url, verify=ca_only, trust_env=False) as client,
            pytest.raises(httpx.ConnectError),
        ):
            client.post(f"https://localhost:{port}/v1/messages", json={})
        # A vendor host through the same proxy is intercepted and recorded.
        vendor = ssl.create_default_context(cafile=str(proxy.bundle))
        with httpx.Client(proxy=proxy.url, verify=vendor, trust_env=False) as client:
            recorded = client.post(
                "https://api.anthropic.com/v1/messages",
                json={"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": []},
                headers={"x-api-key": SECRET, "anthropic-version": "2023-06-01"},
            )
        assert recorded.status_code == 200 and recorded.content == upstream.sent[-1]
    assert len(upstream.received) == before + 1
    inspector_server.trace_id("proxy:anthropic-messages:tunnelled")  # recorded just after
    captured = inspector_server.rows(
        "SELECT capture_key FROM traces_trace WHERE capture_key LIKE ?", "%:tunnelled"
    )
    assert captured == [("proxy:anthropic-messages:tunnelled",)]
    assert SECRET.encode() not in proxy.log.read_bytes()


def test_a_vendor_stream_reaches_the_client_as_it_arrives(inspector_server, mitmdump, tmp_path):
    """The upstream sends an event every 0.25 s: the first reaches the client through the
    forward proxy long before the stream ends (mitmproxy would otherwise buffer it)."""
    with forward_proxy(
        server=inspector_server.base,
        session="forward-stream",
        data_dir=tmp_path,
        environ={"INSPECTOR_MITMDUMP": mitmdump},
    ) as proxy:
        trust = ssl.create_default_context(cafile=str(proxy.bundle))
        with httpx.Client(proxy=proxy.url, verify=trust, trust_env=False, timeout=30) as client:
            started = time.monotonic()
            arrivals = []
            with client.stream(
                "POST",
                "https://api.anthropic.com/v1/messages",
                json={"model": "slow", "max_tokens": 64, "stream": True, "messages": []},
                headers={"x-api-key": SECRET, "anthropic-version": "2023-06-01"},
            ) as reply:
                assert reply.headers["content-type"].startswith("text/event-stream")
                for chunk in reply.iter_raw():
                    if chunk:
                        arrivals.append(time.monotonic() - started)
    assert len(arrivals) >= 3
    assert arrivals[0] < arrivals[-1] - 0.5, arrivals
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:forward-stream")
    assert len(inspector_server.wait_report(trace_id, calls=1)["calls"]) == 1


def test_proxy_forward_runs_until_interrupted_and_prints_what_to_set(
    inspector_server, mitmdump, tmp_path
):
    listen = free_port()
    env = server_env(
        DATABASE_URL=f"sqlite:///{tmp_path}/missing/db.sqlite3",
        REDIS_URL="",
        INSPECTOR_DATA_DIR=str(tmp_path / "data"),
        INSPECTOR_MITMDUMP=mitmdump,
    )
    command = [
        sys.executable, "manage.py", "proxy", "--forward", "--server", inspector_server.base,
        "--session", "standing", "--listen-port", str(listen),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        printed = [process.stdout.readline() for _ in range(4)]
        assert printed[0].startswith(f"forward proxy on http://127.0.0.1:{listen}"), printed
        bundle = next(line for line in printed if "SSL_CERT_FILE=" in line)
        bundle = bundle.split("SSL_CERT_FILE=")[1].split()[0]
        trust = ssl.create_default_context(cafile=bundle)
        proxy = f"http://127.0.0.1:{listen}"
        with httpx.Client(proxy=proxy, verify=trust, trust_env=False, timeout=30) as client:
            reply = client.post(
                "https://api.anthropic.com/v1/messages",
                json={"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": []},
                headers={"x-api-key": SECRET, "anthropic-version": "2023-06-01"},
            )
        assert reply.status_code == 200
        inspector_server.trace_id("proxy:anthropic-messages:standing")
    finally:
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    with socket.socket() as probe:  # mitmdump stopped with it
        assert probe.connect_ex(("127.0.0.1", listen)) != 0
