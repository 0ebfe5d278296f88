"""Run an agent with its API calls going through the recording proxy: `record -- CMD …`.

Like claude-trace wrapping claude, for any agent that reads ANTHROPIC_BASE_URL or
OPENAI_BASE_URL: a server is used if one answers (else one is started for the run), a
session is named, the command runs with both base URLs pointing at that session, the
live page is printed, and the session's traces are closed when the command exits.

`--forward` is for agents that cannot be pointed elsewhere: the command runs with
HTTPS_PROXY set to the forward proxy (traces.capture.forward_proxy) and trusting its
local CA, so its calls to the vendors' own hosts are recorded into the session.

The Codex CLI reads no OPENAI_BASE_URL: when the command is `codex`, it is also given
`-c openai_base_url=<the session's proxy URL>` (`with_proxy_flags`), which it honours.

A shared server records only calls that carry an API token of `ingest` scope (`--token`,
default $LOOP_INSPECTOR_TOKEN): behind the forward proxy every recorded call carries it;
pointed by base URL, Claude Code is given it in ANTHROPIC_CUSTOM_HEADERS (the other
agents have no such variable: use --forward). The token also asks for the session's
traces at the end; one that may not read them leaves their closing to the idle timeout.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import PurePath
from typing import IO

import httpx
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from traces.access.rules import TOKEN_HEADER
from traces.capture.forward_proxy import (
    ForwardProxyUnavailable,
    child_environment,
    forward_proxy,
)
from traces.capture.proxy import SESSION_NAME

DEFAULT_PORT = 8000
"""Where a server is looked for (and one is started) when --server is not given."""
SERVER_START_SECONDS = 120.0
"""How long a server started for the run may take to answer. A cold start (imports,
migrations checked) takes 2-5 s alone, but tens of seconds on a loaded machine; while
daphne runs it is still starting, and one that exits is reported at once, with its
last words."""
CODEX_NAMES = frozenset({"codex", "codex.js", "codex.cmd", "codex.exe"})
"""The Codex CLI's launchers (npm's script, its Windows shims, the native binary)."""


def with_proxy_flags(command: list[str], openai_url: str) -> list[str]:
    """The command as run: a Codex CLI gets the proxy as a config override (its global
    `-c`, before any subcommand), since it ignores OPENAI_BASE_URL; others unchanged."""
    if PurePath(command[0]).name.lower() not in CODEX_NAMES:
        return command
    # A TOML string: Codex parses each `-c` value as TOML.
    return [command[0], "-c", f'openai_base_url="{openai_url}"', *command[1:]]


class Command(BaseCommand):
    help = (
        "Run COMMAND with ANTHROPIC_BASE_URL and OPENAI_BASE_URL pointing at the recording "
        "proxy; print the live page; close the trace when COMMAND exits. "
        "Usage: manage.py record [--server URL] [--session NAME] [--forward] -- COMMAND ARGS..."
    )

    def add_arguments(self, parser):
        parser.add_argument("--server", default="", metavar="URL", help="a running server")
        parser.add_argument("--session", default="", help="the session (trace) name")
        parser.add_argument(
            "--port",
            type=int,
            default=0,
            help="without --server: the local port to look for a server on, and to start "
            "one on when none answers (default 8000)",
        )
        parser.add_argument(
            "--forward",
            action="store_true",
            help="for agents that cannot be pointed elsewhere: run COMMAND behind the HTTPS "
            "forward proxy (HTTPS_PROXY, trusting its local CA) instead of setting base URLs",
        )
        parser.add_argument(
            "--one-hop",
            action="store_true",
            help="with --forward: send the vendors' calls straight to their upstream and record "
            "them after (faster; an unreachable upstream gets mitmproxy's own 502)",
        )
        parser.add_argument(
            "--token",
            default=os.environ.get("LOOP_INSPECTOR_TOKEN", ""),
            help="on a shared server: an API token of ingest scope, sent with every recorded "
            "call (default: $LOOP_INSPECTOR_TOKEN)",
        )
        parser.add_argument("command", nargs=argparse.REMAINDER)

    def handle(
        self, *args, server, session, port, command, forward=False, token="", one_hop=False, **_
    ):
        command = command[1:] if command[:1] == ["--"] else command
        if not command:
            raise CommandError("Say what to run: manage.py record -- COMMAND ARGS...")
        session = session or datetime.now(UTC).strftime("record-%Y%m%d-%H%M%S-")
        session = session if session[-1] != "-" else session + secrets.token_hex(2)
        if not SESSION_NAME.match(session):
            raise CommandError("A session name is 1-100 letters, digits, '.', '_', ':' or '-'.")
        with self._server(server, port, token) as base, ExitStack() as stack:
            proxy = f"{base}/proxy/s/{session}"
            if forward:
                try:
                    forwarding = stack.enter_context(
                        forward_proxy(
                            server=base,
                            session=session,
                            data_dir=settings.INSPECTOR_DATA_DIR,
                            token=token,
                            one_hop=one_hop,
                        )
                    )
                except ForwardProxyUnavailable as exc:
                    raise CommandError(str(exc)) from exc
                env = child_environment(forwarding, os.environ)
                self.stdout.write(
                    f"forward proxy {forwarding.url} (local CA {forwarding.ca_cert}, trusted by "
                    f"{command[0]} only)"
                )
            else:
                env = {
                    **os.environ,
                    "ANTHROPIC_BASE_URL": f"{proxy}/anthropic",
                    "OPENAI_BASE_URL": f"{proxy}/openai/v1",
                    "GOOGLE_GEMINI_BASE_URL": f"{proxy}/gemini",
                }
                if token:
                    env["ANTHROPIC_CUSTOM_HEADERS"] = claude_headers(os.environ, token)
                command = with_proxy_flags(command, f"{proxy}/openai/v1")
            self.stdout.write(f"recording session {session}: live page {proxy}/")
            self.stdout.flush()
            try:
                code = subprocess.call(command, env=env)
            except OSError as exc:
                raise CommandError(f"could not run {command[0]}: {exc}") from exc
            except KeyboardInterrupt:
                code = 130
            stack.close()
            self._close(base, session, token)
        if code:
            raise CommandError(f"{command[0]} exited with status {code}", returncode=code)

    def _close(self, base: str, session: str, token: str) -> None:
        """Close the session's traces once the last calls are recorded (they are stored
        just after their responses end)."""
        headers = {TOKEN_HEADER: token} if token else {}
        with httpx.Client(timeout=30, trust_env=False, headers=headers) as client:
            seen, deadline = None, time.monotonic() + 60
            while True:
                reply = client.get(f"{base}/api/captures/{session}")
                if reply.status_code in (401, 403, 404):
                    self.stdout.write(
                        "this token may not read the session's traces: they close after "
                        "the server's idle timeout"
                    )
                    return
                status = reply.json()
                traces = status["traces"]
                counts = [(t["id"], t["calls"]) for t in traces]
                settled = counts == seen and not status.get("recording")
                if settled or time.monotonic() > deadline:
                    break
                seen = counts
                time.sleep(0.3)
            if not traces:
                self.stdout.write("no model call went through the proxy")
            for trace in traces:
                if trace["state"] == "live":
                    closed = client.post(f"{base}/api/traces/{trace['id']}/close").json()
                    trace["calls"] = closed["calls"]
                self.stdout.write(f"{trace['url']}  {trace['format']}, {trace['calls']} calls")

    @contextmanager
    def _server(self, server: str, port: int, token: str = ""):
        """The running server's URL, or a daphne started (and stopped) for this run."""
        base = (server or f"http://127.0.0.1:{port or DEFAULT_PORT}").rstrip("/")
        if _answers(base, token):
            yield base
            return
        if server:
            raise CommandError(f"no Loop Inspector answers at {base}")
        call_command("migrate", verbosity=0, interactive=False)
        port = port or (DEFAULT_PORT if _free(DEFAULT_PORT) else _any_free_port())
        base = f"http://127.0.0.1:{port}"
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                 "inspector.asgi:application"],
                stdout=subprocess.DEVNULL,
                stderr=errors,
            )  # fmt: skip
            try:
                deadline = time.monotonic() + SERVER_START_SECONDS
                while not _answers(base):
                    if process.poll() is not None:
                        raise CommandError(
                            f"the server for the proxy stopped at start (exit {process.returncode})"
                            + _last_lines(errors)
                        )
                    if time.monotonic() > deadline:
                        raise CommandError(
                            f"the server for the proxy did not answer at {base} within "
                            f"{SERVER_START_SECONDS:.0f} s" + _last_lines(errors)
                        )
                    time.sleep(0.2)
                self.stdout.write(f"started a server at {base} for this run")
                yield base
            finally:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


def _last_lines(errors: IO[bytes], count: int = 5) -> str:
    """The last lines daphne printed, to say why it did not start (': …'), or ''."""
    errors.seek(0)
    lines = errors.read().decode("utf-8", "replace").strip().splitlines()[-count:]
    return (": " + " / ".join(line.strip() for line in lines)) if lines else ""


def claude_headers(environ: Mapping[str, str], token: str) -> str:
    """ANTHROPIC_CUSTOM_HEADERS (one `Name: value` a line) with our token's header added."""
    kept = [
        line
        for line in environ.get("ANTHROPIC_CUSTOM_HEADERS", "").splitlines()
        if line.strip() and line.split(":", 1)[0].strip().lower() != TOKEN_HEADER.lower()
    ]
    return "\n".join([*kept, f"{TOKEN_HEADER}: {token}"])


def _answers(base: str, token: str = "") -> bool:
    """A Loop Inspector answers there: its session status, or (a shared server, a token
    that may not read) its JSON refusal."""
    headers = {TOKEN_HEADER: token} if token else {}
    try:
        reply = httpx.get(f"{base}/api/captures/probe", timeout=2, trust_env=False, headers=headers)
        body = reply.json()
    except (httpx.HTTPError, ValueError):
        return False
    if reply.status_code == 200:
        return isinstance(body, dict) and "traces" in body
    return reply.status_code in (401, 403) and isinstance(body, dict) and "error" in body


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _any_free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
