"""Shared mode: a background upload goes to the project its token may ingest into, and its
job is seen only by those who may upload there (credentials redacted as for any upload)."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from tests.live.events import agent_lines, ndjson
from tests.web.team_world import build_world
from traces import models


@pytest.fixture
def world(db, settings, tmp_path):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    with override_settings(
        INSPECTOR={"BACKGROUND_UPLOAD_BYTES": 4096}, INSPECTOR_DATA_DIR=tmp_path
    ):
        yield build_world()


def test_a_background_job_belongs_to_its_project(world):
    data = ndjson(agent_lines(30))
    reply = Client().post(
        "/api/traces?name=tokened",
        data=data,
        content_type="application/x-ndjson",
        **world.headers("ingest_token"),
    )
    assert reply.status_code == 202, reply.content
    status_url = reply.json()["status_url"]
    job = models.Job.objects.get(pk=reply.json()["id"])
    assert job.project == world.alpha
    mine = Client().get(status_url, **world.headers("ingest_token"))
    assert mine.status_code == 200 and mine.json()["state"] == "done"
    assert models.Trace.objects.get(pk=mine.json()["trace"]).project == world.alpha

    outsider = Client()
    outsider.force_login(world.users["outsider"])
    assert outsider.get(status_url).status_code == 404  # ingests into beta only
    assert Client().get(status_url).status_code == 401  # anonymous
    assert Client().get(status_url, **world.headers("read_token")).status_code == 403
