"""Agents on a shared server: the recorder and `manage.py tail --server` send an API
token, land in the token's project, and a revoked or missing token is refused."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from tests.live.events import agent_lines, ndjson
from tests.live.test_recorder import recorder_module, run_agent
from tests.web.team_world import build_world
from traces import models

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_world()


def test_the_recorder_sends_its_token(world, live_server):
    recorder = recorder_module.EventRecorder(
        url=live_server.url, name="tokened", token=world.secrets["ingest_token"]
    )
    run_agent(recorder, 3)
    recorder.close()
    trace = models.Trace.objects.get(name="tokened")
    assert trace.project == world.alpha and trace.state == "closed"
    assert trace.calls_count == 3
    token = models.ApiToken.objects.get(pk=world.token_ids["ingest_token"])
    assert token.last_used_at is not None


def test_tail_to_a_server_with_a_token(world, live_server, tmp_path):
    log = tmp_path / "agent.jsonl"
    log.write_bytes(ndjson(agent_lines(3)))
    out = io.StringIO()
    call_command(
        "tail", str(log), "--server", live_server.url, "--token", world.secrets["ingest_token"],
        "--idle-exit", "0.5", "--poll", "0.05", "--name", "tailed", stdout=out,
    )  # fmt: skip
    trace = models.Trace.objects.get(name="tailed")
    assert trace.project == world.alpha and trace.state == "closed"
    assert trace.lines_total == len(agent_lines(3)) and trace.calls_count == 3
    assert f"closed: {len(agent_lines(3))} lines, 3 calls" in out.getvalue()


def test_tail_without_a_valid_token_is_refused(world, live_server, tmp_path):
    log = tmp_path / "agent.jsonl"
    log.write_bytes(ndjson(agent_lines(1)))
    models.ApiToken.objects.update(revoked_at=timezone.now())
    for token in ([], ["--token", world.secrets["ingest_token"]]):
        with pytest.raises(CommandError, match="401"):
            call_command(
                "tail", str(log), "--server", live_server.url, *token, "--idle-exit", "0.2",
                stdout=io.StringIO(),
            )  # fmt: skip
    assert not models.Trace.objects.filter(state="live").exists()
