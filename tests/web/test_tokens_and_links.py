"""API tokens and share links: hashed, expiring, bounded by the user's role; a share link
gives the original only when its creator allowed it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from tests.live.events import agent_lines, ndjson
from tests.web.team_world import build_world
from traces import models
from traces.access.rules import Principal, digest_of
from traces.services import team


@pytest.fixture
def world(db, settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return build_world()


def report(world, who):
    return Client().get(f"/api/traces/{world.trace.pk}", **world.headers(who))


def test_tokens_are_stored_hashed_and_record_their_last_use(world):
    token = models.ApiToken.objects.get(pk=world.token_ids["read_token"])
    secret = world.secrets["read_token"]
    assert token.digest == digest_of(secret) and secret not in str(token.__dict__)
    assert token.last_used_at is None
    assert report(world, "read_token").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_an_expired_token_is_refused(world):
    models.ApiToken.objects.filter(pk=world.token_ids["read_token"]).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    response = report(world, "read_token")
    assert response.status_code == 401 and "expired" in response.json()["error"]


def test_a_token_never_exceeds_its_users_current_role(world):
    upload = Client().post(
        "/api/traces", ndjson(agent_lines(2)), content_type="text/plain",
        **world.headers("ingest_token"),
    )  # fmt: skip
    assert upload.status_code == 201
    models.Membership.objects.filter(user=world.users["member"]).update(role="viewer")
    again = Client().post(
        "/api/traces", ndjson(agent_lines(2)), content_type="text/plain",
        **world.headers("ingest_token"),
    )  # fmt: skip
    assert again.status_code == 403


def test_a_viewer_cannot_create_an_ingest_token(world):
    page = world.clients["viewer"].post(
        "/tokens/", {"name": "sneaky", "project": "alpha", "scope_ingest": "1"}
    )
    assert page.status_code == 400 and b"needs member role" in page.content
    assert not models.ApiToken.objects.filter(name="sneaky").exists()
    read = world.clients["viewer"].post(
        "/tokens/", {"name": "reader", "project": "alpha", "scope_read": "1"}
    )
    assert read.status_code == 200 and b"copy it now" in read.content


def test_a_share_link_gives_the_original_only_when_allowed(world):
    client = world.clients["share_link"]
    assert client.get(f"/traces/{world.trace.pk}/download").status_code == 401
    assert client.get(f"/traces/{world.trace.pk}/export.html").status_code == 200
    _link, secret = team.share_create(
        who=Principal(user=world.users["member"]), trace=world.trace, allow_original=True
    )
    stranger = Client()
    assert stranger.get(f"/s/{secret}").status_code == 302
    download = stranger.get(f"/traces/{world.trace.pk}/download")
    assert download.status_code == 200 and download.content == ndjson(agent_lines(3))


def test_an_expired_share_link_is_refused(world):
    models.ShareLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert Client().get(f"/s/{world.share_secret}").status_code == 410
    page = world.clients["share_link"].get(f"/traces/{world.trace.pk}/", HTTP_ACCEPT="text/html")
    assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")


def test_a_token_may_come_in_its_own_header_beside_a_provider_key(world):
    """A recording proxy forwards the agent's provider key in Authorization: that is not
    ours to judge, and the inspector's token rides in X-Loop-Inspector-Token."""
    url = f"/api/traces/{world.trace.pk}"
    provider = {"HTTP_AUTHORIZATION": "Bearer sk-ant-api03-providerkey"}
    assert Client().get(url, **provider).status_code == 401  # anonymous, not "bad token"
    assert "Log in" in Client().get(url, **provider).json()["error"]
    ours = {"HTTP_X_LOOP_INSPECTOR_TOKEN": world.secrets["read_token"]}
    assert Client().get(url, **provider, **ours).status_code == 200
    bad = {"HTTP_X_LOOP_INSPECTOR_TOKEN": "li_unknown"}
    assert "revoked" in Client().get(url, **bad).json()["error"]


@pytest.mark.parametrize(
    "wanted, goes_to",
    [
        ("https://evil.example/phish", "/team/tokens/"),
        ("//evil.example/", "/team/tokens/"),
        ("javascript:alert(1)", "/team/tokens/"),
        ("/traces/", "/traces/"),
    ],
)
def test_revoking_a_token_redirects_only_within_the_site(world, wanted, goes_to):
    """Issue 26: `next=` after revoking a token was an open redirect."""
    from django.urls import reverse

    token_id = world.token_ids["read_token"]
    # The token's owner revokes it (any token of the project, for an owner).
    client = world.clients["owner"]
    url = reverse("team:token-revoke", args=[token_id])
    response = client.post(url, {"next": wanted})
    assert response.status_code == 302
    tokens = reverse("team:tokens")
    assert response["Location"] == (tokens if goes_to == "/team/tokens/" else goes_to)


def test_a_set_page_offers_only_sets_the_viewer_may_read(world):
    """Issue 26: another project's set names appeared in "Compare with"."""
    models.RunSet.objects.create(project=world.beta, name="beta secret set")
    models.RunSet.objects.create(project=world.alpha, name="alpha other set")
    page = world.clients["member"].get(f"/sets/{world.run_set.pk}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "alpha other set" in text
    assert "beta secret set" not in text
