"""A web page on another origin cannot drive a local-mode server through the browser.

A real daphne (local mode, loopback, no login) and a real Chromium. The "attacker" page
is served by this test on another port of 127.0.0.1; from it the browser tries what a
malicious page would: no-cors fetches that create a trace, append lines to and close a
live one, a cross-site form post, and the ingest websocket. Nothing may change. The same
requests from the inspector's own page, and from a script without browser headers (an
agent), still work: the refusals are about the origin, not the requests.
"""

from __future__ import annotations

import http.server
import json
import sqlite3
import threading
import urllib.request
from contextlib import contextmanager

import pytest

from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.live.conftest import in_fresh_thread
from tests.live.events import agent_lines, ndjson
from tests.live.servers import daphne, migrate, server_env

playwright_api = pytest.importorskip("playwright.sync_api")

pytestmark = pytest.mark.browser

ATTACKER_PAGE = b"""<!doctype html><html><head><title>another site</title></head>
<body><p>Nothing to see here.</p></body></html>"""


def post(url: str, body: bytes = b"") -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/x-ndjson"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


@contextmanager
def attacker_site():
    """A page on http://127.0.0.1:<another port>: another origin than the inspector's."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(ATTACKER_PAGE)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def server_setup(tmp_path):
    database = tmp_path / "cross-site.sqlite3"
    env = server_env(DATABASE_URL=f"sqlite:///{database}", INSPECTOR_AUTH="")
    migrate(env)
    return env, tmp_path / "daphne.log", database


def trace_rows(database) -> dict[str, tuple[str, int]]:
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT id, state, lines_total FROM traces_trace").fetchall()
    return {str(pk): (state, lines) for pk, state, lines in rows}


ATTACK = """async ([base, traceId, lines]) => {
  const tried = {};
  const send = async (name, url, body) => {
    try {
      await fetch(url, {method: "POST", mode: "no-cors", body: body,
                        headers: {"Content-Type": "text/plain"}});
      tried[name] = "sent";
    } catch (error) { tried[name] = "blocked: " + error; }
  };
  await send("create", base + "/api/traces?name=planted", lines);
  await send("create-live", base + "/api/traces?live=1&name=planted-live", "");
  await send("append", base + "/api/traces/" + traceId + "/lines?offset=0", lines);
  await send("close", base + "/api/traces/" + traceId + "/close", "");
  tried.socket = await new Promise((resolve) => {
    const socket = new WebSocket(base.replace("http", "ws") + "/ws/ingest/" + traceId + "/");
    socket.onopen = () => {
      socket.send(JSON.stringify({offset: 0, lines: lines.trim().split("\\n")}));
      socket.send(JSON.stringify({type: "close"}));
      resolve("open");
    };
    socket.onerror = () => resolve("refused");
    setTimeout(() => resolve("timeout"), 8000);
  });
  return tried;
}"""

FORM_POST = """([base, traceId]) => {
  const form = document.createElement("form");
  form.method = "post";
  form.action = base + "/api/traces/" + traceId + "/close";
  document.body.append(form);
  form.submit();
}"""


def test_another_origin_cannot_create_append_close_or_open_the_ingest_socket(server_setup):
    in_fresh_thread(attack, *server_setup)


def attack(env, log_path, database) -> None:
    lines = ndjson(agent_lines(2)).decode()
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True
        )
        try:
            with daphne(env, log_path) as base, attacker_site() as elsewhere:
                # An agent (no browser headers) creates a live trace: unchanged.
                status, trace = post(base + "/api/traces?live=1&name=agent")
                assert status == 201, trace
                before = trace_rows(database)
                assert before[trace["id"].replace("-", "")] == ("live", 0)  # SQLite: hex ids

                page = browser.new_page()
                page.goto(elsewhere)
                tried = page.evaluate(ATTACK, [base, trace["id"], lines])
                assert tried["socket"] == "refused", tried
                assert {tried[k] for k in ("create", "create-live", "append", "close")} == {
                    "sent"
                }, tried  # the browser did send them: the server refused them
                page.evaluate(FORM_POST, [base, trace["id"]])
                page.wait_for_url(f"{base}/**")
                assert "cross-site" in page.content() or "another" in page.content()
                assert trace_rows(database) == before  # nothing created, appended, closed

                # The inspector's own page may do the same (same origin) ...
                own = browser.new_page()
                own.goto(base + "/rules/")
                done = own.evaluate(
                    """async ([base, lines]) => (await fetch(base + "/api/traces?name=mine",
                         {method: "POST", body: lines})).status""",
                    [base, lines],
                )
                assert done == 201
                assert len(trace_rows(database)) == len(before) + 1
                # ... and so may an agent, on the trace the page could not touch.
                status, appended = post(
                    f"{base}/api/traces/{trace['id']}/lines?offset=0", lines.encode()
                )
                assert status == 200 and appended["accepted"] == len(agent_lines(2))
                status, closed = post(f"{base}/api/traces/{trace['id']}/close")
                assert status == 200 and closed["state"] == "closed"
        finally:
            browser.close()
