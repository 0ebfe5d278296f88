"""`record --forward` on a shared server (issue 23): the agent knows nothing of Loop
Inspector, so the forward proxy adds the API token (`--token` / $LOOP_INSPECTOR_TOKEN) to
the calls it hands to the recording proxy. They land in the token's project; the token
never reaches the upstream, mitmdump's command line or the store. A token that may read
too lets the command close the session's traces; an ingest-only one leaves that to the
idle timeout, and says so. Without a token nothing is recorded or sent on.

The server is a real daphne in shared mode on its own SQLite file, its project and tokens
made by our own services in a process of their own (`TEAM_SETUP`)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import time

import pytest

from tests.capture.conftest import LiveServer
from tests.capture.scenario import SECRET, ports
from tests.capture.test_commands import manage
from tests.capture.test_forward_proxy import AGENT, mitmdump, record_env  # noqa: F401
from tests.live.servers import ROOT, daphne, migrate, server_env
from traces.capture.forward_proxy import mitmdump_command, mitmdump_environment

pytestmark = pytest.mark.corpus

TEAM_SETUP = """
import json, django
django.setup()
from django.contrib.auth import get_user_model
from traces import models
from traces.access.rules import Principal
from traces.services import team
user = get_user_model().objects.create_user("member", password="correct horse battery 13")
project = models.Project.objects.create(slug="alpha", name="Alpha")
models.Membership.objects.create(project=project, user=user, role="member")
secrets = {}
for name, scopes in (("ingest", ["ingest"]), ("both", ["read", "ingest"])):
    _, secrets[name] = team.token_create(
        who=Principal(user=user), project=project, name=name, scopes=scopes
    )
print(json.dumps({"project": project.pk, **secrets}))
"""


@pytest.fixture(scope="module")
def shared(upstream, tmp_path_factory):
    """(the server, its project's id, the ingest-only token, the read+ingest token)."""
    folder = tmp_path_factory.mktemp("shared-forward")
    database = folder / "shared.sqlite3"
    env = server_env(
        DATABASE_URL=f"sqlite:///{database}",
        REDIS_URL="",
        DJANGO_SETTINGS_MODULE="tests.capture.proxy_settings",
        INSPECTOR_AUTH="1",
        INSPECTOR_HTTPS="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),  # shared mode refuses the public one
        INSPECTOR_UPSTREAM_ANTHROPIC=upstream.base,
        INSPECTOR_UPSTREAM_OPENAI=upstream.base + "/v1",
        INSPECTOR_UPSTREAM_OPENROUTER=upstream.base + "/api/v1",
    )
    migrate(env)
    made = subprocess.run(
        [sys.executable, "-c", TEAM_SETUP], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    team = json.loads(made.stdout.strip().splitlines()[-1])
    log = folder / "daphne.log"
    with daphne(env, log, ports() or None) as base:
        yield LiveServer(base, database, log), team


def record(server: LiveServer, mitmdump: str, tmp_path, session: str, token: str):  # noqa: F811
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    env = record_env(tmp_path, mitmdump, LOOP_INSPECTOR_TOKEN=token)
    return manage(
        "record", "--server", server.base, "--session", session, "--forward",
        "--", sys.executable, str(script), env=env,
    )  # fmt: skip


def session_traces(server: LiveServer, session: str, calls: int) -> list[tuple]:
    """(format, project id, calls, state) of the session's traces, once they hold `calls`
    calls (recorded just after each response, off its path)."""
    deadline = time.monotonic() + 20
    while True:
        rows = server.rows(
            "SELECT format, project_id, calls_count, state FROM traces_trace "
            "WHERE capture_key LIKE ? ORDER BY format",
            f"%proxy:%:{session}",  # a shared server's keys start with the project
        )
        if sum(row[2] for row in rows) >= calls or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)


def test_the_token_goes_in_mitmdumps_environment_only(tmp_path):
    token = "li_example_token_for_the_environment"
    command = mitmdump_command(
        "mitmdump", port=1, server="http://127.0.0.1:2", session="s", confdir=tmp_path
    )
    assert not any(token in part for part in command)
    environment = mitmdump_environment({"PATH": "/bin", "LOOP_INSPECTOR_TOKEN": "other"}, token)
    assert environment == {"PATH": "/bin", "LOOP_INSPECTOR_TOKEN": token}
    assert "LOOP_INSPECTOR_TOKEN" not in mitmdump_environment({"LOOP_INSPECTOR_TOKEN": "x"}, "")


def test_an_ingest_token_records_into_its_project(shared, upstream, mitmdump, tmp_path):  # noqa: F811
    server, team = shared
    before = len(upstream.received)
    done = record(server, mitmdump, tmp_path, "shared-ingest", team["ingest"])
    assert done.returncode == 0, done.stderr
    assert "anthropic https://api.anthropic.com tool_use" in done.stdout
    assert "close after the server's idle timeout" in done.stdout  # it may not read
    rows = session_traces(server, "shared-ingest", 3)
    assert [(f, p, n) for f, p, n, _ in rows] == [
        ("anthropic-messages", team["project"], 1),
        ("openai-chat", team["project"], 2),  # OpenAI's and OpenRouter's call
    ]
    received = upstream.received[before:]
    assert len(received) == 3
    for request in received:  # the vendor's key went on, our token did not
        headers = {k.lower(): v for k, v in request.headers.items()}
        assert "x-loop-inspector-token" not in headers
        assert team["ingest"] not in repr(headers)
    assert SECRET in repr(received[0].headers)
    stored = repr(server.rows("SELECT data FROM traces_blob"))
    assert team["ingest"] not in stored
    assert team["ingest"] not in done.stdout + done.stderr
    (used,) = server.rows("SELECT last_used_at FROM traces_apitoken WHERE name = 'ingest'")
    assert used[0] is not None


def test_a_read_and_ingest_token_also_closes_the_sessions_traces(
    shared,
    mitmdump,  # noqa: F811
    tmp_path,
):
    server, team = shared
    done = record(server, mitmdump, tmp_path, "shared-both", team["both"])
    assert done.returncode == 0, done.stderr
    assert "anthropic-messages, 1 calls" in done.stdout
    assert "openai-chat, 2 calls" in done.stdout
    rows = session_traces(server, "shared-both", 3)
    assert {state for *_, state in rows} == {"closed"}


def test_without_a_token_nothing_is_recorded_or_sent_on(shared, upstream, mitmdump, tmp_path):  # noqa: F811
    server, _team = shared
    before = len(upstream.received)
    done = record(server, mitmdump, tmp_path, "no-token", "")
    assert done.returncode != 0  # the SDK got the proxy's refusal, in its vendor's shape
    assert "Loop Inspector" in done.stderr
    assert len(upstream.received) == before
    assert not server.rows("SELECT id FROM traces_trace WHERE capture_key LIKE '%:no-token'")
