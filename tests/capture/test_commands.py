"""`manage.py tail --server` (HTTP only, resends after a lost acknowledgement) and
`manage.py record -- COMMAND` (with a running server, and starting its own)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.capture.scenario import SECRET, ports
from tests.live.events import agent_lines, ndjson
from tests.live.servers import ROOT, server_env

pytestmark = pytest.mark.corpus


def manage(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def no_database_env(tmp_path) -> dict[str, str]:
    """A database this process cannot open: the tail must work over HTTP alone."""
    return server_env(DATABASE_URL=f"sqlite:///{tmp_path}/missing/dir/db.sqlite3", REDIS_URL="")


class LosingProxy:
    """Forwards to the server, but drops the answer to the first lines POST (after the
    server stored it): the client must find out what was stored and not send it twice."""

    def __init__(self, target: str) -> None:
        self.dropped = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                request = urllib.request.Request(
                    target + self.path, data=body, method=self.command,
                    headers={"Content-Type": self.headers.get("content-type", "")},
                )  # fmt: skip
                try:
                    with urllib.request.urlopen(request, timeout=30) as reply:
                        status, data = reply.status, reply.read()
                except urllib.error.HTTPError as error:
                    status, data = error.code, error.read()
                if "/lines" in self.path and self.command == "POST" and not owner.dropped:
                    owner.dropped += 1
                    self.close_connection = True
                    return  # stored upstream, but the client never hears so
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", ports()), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_tail_to_a_server_over_http_resends_after_a_lost_answer(inspector_server, tmp_path):
    lines = agent_lines(4)
    log = tmp_path / "agent.jsonl"
    log.write_bytes(ndjson(lines))
    flaky = LosingProxy(inspector_server.base)
    try:
        done = manage(
            "tail", str(log), "--server", flaky.base, "--idle-exit", "1", "--poll", "0.05",
            "--name", "remote-tail", env=no_database_env(tmp_path),
        )  # fmt: skip
    finally:
        flaky.server.shutdown()
    assert done.returncode == 0, done.stderr
    assert flaky.dropped == 1
    first = done.stdout.splitlines()[0]
    assert first.startswith(f"{inspector_server.base}/traces/")  # the server's own address
    assert "closed: 15 lines, 4 calls" in done.stdout
    trace_id = first.split("/traces/")[1].split("/")[0]
    stored = inspector_server.get(f"/traces/{trace_id}/download")
    assert stored == ndjson(lines)  # every line once, in order


AGENT = textwrap.dedent(
    """
    import anthropic
    client = anthropic.Anthropic(api_key="API_KEY", max_retries=0)  # base URL from the environment
    messages = [{"role": "user", "content": "Weather and time in New York?"}]
    first = client.messages.create(model="claude-sonnet-4-6", max_tokens=512, messages=messages)
    results = [{"type": "tool_result", "tool_use_id": b.id, "content": "ok"}
               for b in first.content if b.type == "tool_use"]
    messages += [{"role": "assistant", "content": [b.model_dump() for b in first.content]},
                 {"role": "user", "content": results}]
    client.messages.create(model="claude-sonnet-4-6", max_tokens=512, messages=messages)
    print("agent done")
    """
).replace("API_KEY", SECRET)


def test_record_runs_an_agent_through_a_running_server(inspector_server, tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    done = manage(
        "record", "--server", inspector_server.base, "--session", "recorded",
        "--", sys.executable, str(script), env=no_database_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "agent done" in done.stdout
    assert f"live page {inspector_server.base}/proxy/s/recorded/" in done.stdout
    assert "anthropic-messages, 2 calls" in done.stdout
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:recorded")
    state = inspector_server.rows(
        "SELECT state FROM traces_trace WHERE capture_key = ?", "proxy:anthropic-messages:recorded"
    )
    assert state == [("closed",)]
    assert inspector_server.report(trace_id)["outcome"]["kind"] == "finished"


def test_record_starts_a_server_when_none_runs_and_passes_the_exit_status(upstream, tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(AGENT + "\nraise SystemExit(3)\n")
    env = server_env(
        DATABASE_URL=f"sqlite:///{tmp_path}/own.sqlite3",
        REDIS_URL="",
        INSPECTOR_UPSTREAM_ANTHROPIC=upstream.base,
    )
    port = ports() or 0
    done = manage(
        "record", "--port", str(port), "--server", "", "--",
        sys.executable, str(script), env=env,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "started a server at http://127.0.0.1:" in done.stdout
    assert "anthropic-messages, 2 calls" in done.stdout


def test_record_says_why_the_server_it_started_did_not_come_up(tmp_path):
    """The port is held by a socket that never answers: daphne cannot bind and exits, and
    record says so with daphne's own words instead of a bare "could not start"."""
    import socket

    env = server_env(DATABASE_URL=f"sqlite:///{tmp_path}/own.sqlite3", REDIS_URL="")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        done = manage(
            "record", "--port", str(port), "--server", "", "--", sys.executable, "-c", "pass",
            env=env,
        )  # fmt: skip
    assert done.returncode != 0
    assert "the server for the proxy stopped at start (exit" in done.stderr, done.stderr
    assert "Address already in use" in done.stderr, done.stderr
