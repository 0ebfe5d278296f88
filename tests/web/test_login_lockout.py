"""Login pages refuse a password guesser (issue 26: 40 wrong passwords in 9.5 s, then
the right one worked): after INSPECTOR_LOGIN_FAILURES wrong passwords for one user from
one address, both login pages answer 429, the right password included."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple 26"


@pytest.fixture
def user(settings):
    settings.INSPECTOR_AUTH = True
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return get_user_model().objects.create_user("ada", password=PASSWORD, is_staff=True)


@pytest.mark.parametrize("page", ["/accounts/login/", "/admin/login/"])
def test_five_wrong_passwords_lock_the_user_out_from_that_address(user, settings, page):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        wrong = client.post(page, {"username": "ada", "password": "guess"})
        assert wrong.status_code in (200, 429)
    locked = client.post(page, {"username": "ada", "password": PASSWORD})
    assert locked.status_code == 429
    assert b"Too many failed logins" in locked.content
    assert "_auth_user_id" not in client.session
    # Another address is not locked out: the lockout is per user name and address.
    other = Client(REMOTE_ADDR="198.51.100.9")
    assert other.post(page, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_a_right_password_before_the_limit_resets_the_count(user, settings):
    client = Client(REMOTE_ADDR="203.0.113.8")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post("/accounts/login/", {"username": "ada", "password": "guess"})
    assert (
        client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}).status_code
        == 302
    )
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post("/accounts/login/", {"username": "ada", "password": "guess"})
    assert (
        client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}).status_code
        == 302
    )
