"""Shared mode's settings: forced on by a public host name, refused with unsafe settings,
and `check --deploy` clean with the settings the README documents."""

from __future__ import annotations

import secrets
import subprocess
import sys

from tests.live.servers import ROOT, server_env

DOCUMENTED = {"ALLOWED_HOSTS": "inspector.example.com", "DJANGO_DEBUG": "", "INSPECTOR_AUTH": ""}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=server_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_public_host_name_with_the_default_secret_key_is_refused():
    result = manage("check", **DOCUMENTED, DJANGO_SECRET_KEY="")
    assert result.returncode != 0
    assert "needs its own DJANGO_SECRET_KEY" in result.stderr


def test_shared_mode_refuses_debug():
    key = secrets.token_urlsafe(50)
    result = manage(
        "check",
        **(DOCUMENTED | {"ALLOWED_HOSTS": "127.0.0.1", "INSPECTOR_AUTH": "1", "DJANGO_DEBUG": "1"}),
        DJANGO_SECRET_KEY=key,
    )
    assert result.returncode != 0
    assert "refuses to run with DJANGO_DEBUG=1" in result.stderr


def test_check_deploy_passes_with_the_documented_settings():
    result = manage(
        "check", "--deploy", "--fail-level", "WARNING", **DOCUMENTED,
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_loopback_stays_local_mode_without_login():
    result = manage(
        "shell", "-c", "from django.conf import settings; print(settings.INSPECTOR_AUTH)",
        DJANGO_SECRET_KEY="", ALLOWED_HOSTS="", INSPECTOR_AUTH="",
    )  # fmt: skip
    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr
