"""The forward proxy, for agents whose API endpoint cannot be changed: mitmdump as a child.

An HTTPS forward proxy on loopback (`HTTPS_PROXY`), built on mitmproxy, the library made
for this. mitmproxy 11 (the last for Python 3.11) pins asgiref and cryptography below what
channels and daphne need, so it runs from its own environment: `make forward` creates
`.venv-forward`; INSPECTOR_MITMDUMP names another mitmdump (pipx, uv tool, a venv).

Its addon (`traces.capture.forward_addon`) sends the known vendor hosts' calls to the
reverse proxy, where they are recorded by the same code as any proxied call. With
`one_hop` (`--one-hop`, opt-in) it sends them straight to their upstream where the server
says where they go (`fetch_routes`, once at start) and hands each finished exchange to
the server, which records it with the reverse proxy's code (`traces.capture.forwarded`):
9 / 14 ms added p50 / p95 against 18 / 25 ms in two hops (bench/proxy.py --forward-only),
but three answers then differ from the reverse proxy's, which issue 23 asks of every
route: an unreachable upstream gets mitmproxy's own 502 (not the vendor's error shape),
mitmproxy has no read timeout (PROXY_READ_TIMEOUT), and a wrong URL reaches the vendor's
404 instead of our hint. So two hops stay the default. Every other
host is tunnelled untouched. Its local CA is generated on first use in mitmproxy's confdir
under INSPECTOR_DATA_DIR; only the child `record --forward` starts is told to trust it
(`child_environment`), never the system.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

from traces.capture.forward_addon import TOKEN_HEADER, TOKEN_VARIABLE, allow_patterns
from traces.capture.forward_handover import PATH as HANDOVER_PATH

ADDON = Path(__file__).with_name("forward_addon.py")
CONFDIR = "forward-proxy"
"""mitmproxy's confdir under INSPECTOR_DATA_DIR: its CA (key included) lives there."""
CA_CERT = "mitmproxy-ca-cert.pem"
BUNDLE = "ca-bundle.pem"
"""The usual public roots plus the local CA: SSL_CERT_FILE replaces a client's roots, and
the hosts tunnelled untouched still show their own certificates."""
LOG = "mitmdump.log"
ROUTES = "routes.json"
"""The server's routes (`forwarded.routes`), as the addon reads them (`forward_direct`)."""
UPSTREAM_BUNDLE = "upstream-ca-bundle.pem"
"""The public roots plus INSPECTOR_UPSTREAM_CA_BUNDLE's, as the reverse proxy trusts them."""
INSTALL_HINT = (
    "The forward proxy needs mitmdump (mitmproxy 11.0.2, in its own environment: it cannot "
    "share Loop Inspector's). Install it with `make forward` (creates .venv-forward), or "
    "`pipx install mitmproxy==11.0.2`, or `uv tool install mitmproxy==11.0.2`, or "
    "`python3 -m venv ~/mitm && ~/mitm/bin/pip install mitmproxy==11.0.2`; then set "
    "INSPECTOR_MITMDUMP to its mitmdump if it is not on PATH."
)
START_SECONDS = 30.0


class ForwardProxyUnavailable(Exception):
    """mitmdump cannot be found or did not start: the message says what to do."""


@dataclass(frozen=True)
class ForwardProxy:
    url: str
    """http://127.0.0.1:<port>: the HTTPS_PROXY of the clients."""
    ca_cert: Path
    bundle: Path
    log: Path
    process: subprocess.Popen[bytes]


def mitmdump_path(environ: Mapping[str, str] | None = None) -> str:
    """INSPECTOR_MITMDUMP, else `.venv-forward/bin/mitmdump` of this checkout or the
    current folder, else mitmdump on PATH; ForwardProxyUnavailable saying how to install it."""
    environ = os.environ if environ is None else environ
    named = environ.get("INSPECTOR_MITMDUMP", "")
    if named:
        if Path(named).is_file() and os.access(named, os.X_OK):
            return named
        raise ForwardProxyUnavailable(
            f"INSPECTOR_MITMDUMP={named} is not an executable file. {INSTALL_HINT}"
        )
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        candidate = root / ".venv-forward" / "bin" / "mitmdump"
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("mitmdump", path=environ.get("PATH"))
    if found:
        return found
    raise ForwardProxyUnavailable(f"mitmdump was not found. {INSTALL_HINT}")


def mitmdump_command(
    mitmdump: str,
    *,
    port: int,
    server: str,
    session: str,
    confdir: Path,
    routes: Path | None = None,
    upstream_bundle: Path | None = None,
    addon: Path = ADDON,
) -> list[str]:
    """mitmdump on loopback with our addon: lazy upstream connections (an upstream is
    contacted only for a request, never to sniff its certificate), no onboarding app, no
    flow printed (a URL may carry a key). `routes`: the server's routes file (calls in
    one hop); `upstream_bundle`: the roots an upstream's certificate is checked with."""
    command = [
        mitmdump,
        "--quiet",
        "--listen-host", "127.0.0.1",
        "--listen-port", str(port),
        "--set", f"confdir={confdir}",
        "--set", "connection_strategy=lazy",
        "--set", "upstream_cert=false",
        "--set", "onboarding=false",
        "--set", "flow_detail=0",
        "-s", str(addon),
        "--set", f"inspector_server={server.rstrip('/')}",
        "--set", f"inspector_session={session}",
    ]  # fmt: skip
    if routes is not None:
        command += ["--set", f"inspector_routes={routes}"]
    if upstream_bundle is not None:
        command += ["--set", f"ssl_verify_upstream_trusted_ca={upstream_bundle}"]
    for pattern in allow_patterns():
        command += ["--allow-hosts", pattern]
    return command


def mitmdump_environment(environ: Mapping[str, str], token: str) -> dict[str, str]:
    """mitmdump's environment: ours, with the token the calls carry (a token in the
    user's shell goes on only when it is the one asked for)."""
    child = {k: v for k, v in environ.items() if k != TOKEN_VARIABLE}
    if token:
        child[TOKEN_VARIABLE] = token
    return child


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def forward_proxy(
    *,
    server: str,
    session: str,
    data_dir: Path,
    port: int = 0,
    output: IO[bytes] | None = None,
    environ: Mapping[str, str] | None = None,
    token: str = "",
    addon: Path = ADDON,
    one_hop: bool = False,
) -> Iterator[ForwardProxy]:
    """mitmdump running for the block, listening on 127.0.0.1:`port` (0: a free one),
    its output to `output` (default: the log file in its confdir); stopped after.
    `token`: the API token the recorded calls carry to a shared server (in mitmdump's
    environment only). `addon`: another tree's (a benchmark's before). `one_hop`: calls
    go straight to their upstream where the server gives its routes (see above)."""
    mitmdump = mitmdump_path(environ)
    confdir = Path(data_dir) / CONFDIR
    confdir.mkdir(parents=True, exist_ok=True)
    confdir.chmod(0o700)  # the CA's private key is in there
    port = port or free_port()
    routes, bundle = write_routes(confdir, fetch_routes(server, token) if one_hop else None)
    command = mitmdump_command(
        mitmdump,
        port=port,
        server=server,
        session=session,
        confdir=confdir,
        routes=routes,
        upstream_bundle=bundle,
        addon=addon,
    )
    log = confdir / LOG
    with open(log, "ab") as log_file:
        process = subprocess.Popen(
            command,
            env=mitmdump_environment(os.environ if environ is None else environ, token),
            stdin=subprocess.DEVNULL,
            stdout=output or log_file,
            stderr=subprocess.STDOUT if output is None else None,
        )
        try:
            ca_cert = confdir / CA_CERT
            _wait_ready(process, port, ca_cert, log)
            bundle = write_bundle(ca_cert)
            yield ForwardProxy(f"http://127.0.0.1:{port}", ca_cert, bundle, log, process)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def fetch_routes(server: str, token: str) -> dict[str, object] | None:
    """The server's routes for calls made in one hop, or None: it refused (no token of
    ingest scope on a shared server), an older server without the hand-over, or none
    answered (every call then goes through the reverse proxy, which says why)."""
    headers = {TOKEN_HEADER: token} if token else {}
    try:
        reply = httpx.get(
            server.rstrip("/") + HANDOVER_PATH, headers=headers, timeout=10, trust_env=False
        )
        found = reply.json() if reply.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def write_routes(
    confdir: Path, routes: dict[str, object] | None
) -> tuple[Path | None, Path | None]:
    """The routes file for the addon and, when the server trusts an extra CA for its
    upstreams, the bundle mitmproxy checks them with (public roots plus that CA, as
    `proxy_upstream._trusted_roots`); (None, None) without routes."""
    path = confdir / ROUTES
    path.unlink(missing_ok=True)
    if routes is None:
        return None, None
    path.write_text(json.dumps(routes))
    extra = str(routes.get("ca_bundle") or "")
    if not extra or not Path(extra).is_file():
        return path, None
    import certifi

    bundle = confdir / UPSTREAM_BUNDLE
    roots = Path(certifi.where()).read_text().rstrip("\n")
    bundle.write_text(roots + "\n" + Path(extra).read_text())
    return path, bundle


def _wait_ready(process: subprocess.Popen[bytes], port: int, ca_cert: Path, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ForwardProxyUnavailable(
                f"mitmdump exited with status {process.returncode} (see {log})."
            )
        if ca_cert.is_file():
            with socket.socket() as probe:
                probe.settimeout(0.5)
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return
        time.sleep(0.1)
    raise ForwardProxyUnavailable(
        f"mitmdump did not listen on 127.0.0.1:{port} within {START_SECONDS:.0f} s."
    )


def write_bundle(ca_cert: Path) -> Path:
    """The public roots (certifi's, else the system's) followed by the local CA."""
    roots = ""
    try:
        import certifi

        roots = Path(certifi.where()).read_text()
    except (ImportError, OSError):
        import ssl

        system = ssl.get_default_verify_paths().cafile
        if system and Path(system).is_file():
            roots = Path(system).read_text()
    bundle = ca_cert.with_name(BUNDLE)
    bundle.write_text(roots.rstrip("\n") + "\n" + ca_cert.read_text())
    return bundle


def child_environment(proxy: ForwardProxy, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of a child whose HTTPS goes through the forward proxy and which
    trusts the local CA (Node's extra roots; Python's, requests', curl's and the AWS
    SDKs' bundle).
    Loopback is reached directly (NO_PROXY), as it was: no vendor host is there."""
    no_proxy = environ.get("NO_PROXY") or environ.get("no_proxy") or ""
    no_proxy = ",".join(filter(None, [no_proxy, "localhost,127.0.0.1,::1"]))
    return {
        **environ,
        "HTTPS_PROXY": proxy.url,
        "https_proxy": proxy.url,
        "HTTP_PROXY": proxy.url,
        "http_proxy": proxy.url,
        "NODE_EXTRA_CA_CERTS": str(proxy.ca_cert),
        "NODE_USE_ENV_PROXY": "1",
        "SSL_CERT_FILE": str(proxy.bundle),
        "REQUESTS_CA_BUNDLE": str(proxy.bundle),
        "CURL_CA_BUNDLE": str(proxy.bundle),
        "AWS_CA_BUNDLE": str(proxy.bundle),
        "NO_PROXY": no_proxy,
        "no_proxy": no_proxy,
    }
