"""A shared instance with two projects, every kind of principal and one trace, for tests.

alpha: owner, member, viewer (and the member's read, ingest and revoked tokens, and a
share link to its trace); beta: outsider, who owns it and is in no role on alpha.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.access.rules import Principal
from traces.services import team
from traces.services.upload import trace_upload

PRINCIPALS = (
    "anonymous",
    "viewer",
    "member",
    "owner",
    "outsider",
    "read_token",
    "ingest_token",
    "revoked_token",
    "share_link",
)
PASSWORD = "correct horse battery staple 13"


@dataclass
class World:
    alpha: models.Project
    beta: models.Project
    trace: models.Trace
    users: dict[str, Any]
    secrets: dict[str, str]
    token_ids: dict[str, int]
    share_id: int
    share_secret: str
    clients: dict[str, Client] = field(default_factory=dict)
    run_set: models.RunSet | None = None

    def headers(self, name: str) -> dict[str, str]:
        """Extra request headers of a principal (its bearer token)."""
        secret = self.secrets.get(name)
        return {"HTTP_AUTHORIZATION": f"Bearer {secret}"} if secret else {}


def build_world() -> World:
    User = get_user_model()
    alpha = models.Project.objects.create(slug="alpha", name="Alpha")
    beta = models.Project.objects.create(slug="beta", name="Beta")
    users = {}
    for name, project, role in (
        ("owner", alpha, "owner"),
        ("member", alpha, "member"),
        ("viewer", alpha, "viewer"),
        ("outsider", beta, "owner"),
    ):
        users[name] = User.objects.create_user(name, password=PASSWORD)
        models.Membership.objects.create(project=project, user=users[name], role=role)
    member = Principal(user=users["member"])
    trace = trace_upload(
        files=[("run.jsonl", ndjson(agent_lines(3)))], name="alpha run", project=alpha
    ).trace
    secrets, token_ids = {}, {}
    for name, scopes in (
        ("read_token", ["read"]),
        ("ingest_token", ["ingest"]),
        ("revoked_token", ["read", "ingest"]),
    ):
        token, secrets[name] = team.token_create(
            who=member, project=alpha, name=name, scopes=scopes
        )
        token_ids[name] = token.pk
    models.ApiToken.objects.filter(pk=token_ids["revoked_token"]).update(revoked_at=timezone.now())
    link, share_secret = team.share_create(who=member, trace=trace)
    world = World(alpha, beta, trace, users, secrets, token_ids, link.pk, share_secret)
    world.run_set = models.RunSet.objects.create(project=alpha, name="alpha set")
    models.Trace.objects.filter(pk=trace.pk).update(run_set=world.run_set)
    for name in PRINCIPALS:
        client = Client()
        if name in users:
            client.force_login(users[name])
        if name == "share_link":
            assert client.get(f"/s/{share_secret}").status_code == 302
        world.clients[name] = client
    return world
