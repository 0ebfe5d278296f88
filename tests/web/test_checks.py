"""Startup problems are system checks with stable ids (traces.checks), and the server
refuses to start on our errors although daphne runs no checks: the ASGI application runs
them, and so does runserver."""

from __future__ import annotations

import secrets
import subprocess
import sys

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured

from tests.live.servers import ROOT, free_port, server_env
from traces import checks
from traces.conf import inspector_settings

UNSAFE_SHARED = {"ALLOWED_HOSTS": "inspector.example.com", "DJANGO_SECRET_KEY": ""}


def ids(messages) -> list[str]:
    return [message.id for message in messages]


def ours() -> list[str]:
    """The ids the registry reports for our tag: the checks are registered, not only defined."""
    return ids(run_checks(tags=[checks.TAG]))


@pytest.fixture
def shared(settings):
    settings.INSPECTOR_AUTH = True
    settings.DEBUG = False
    settings.SECRET_KEY = secrets.token_urlsafe(50)
    return settings


def test_local_mode_with_the_default_settings_has_no_problem():
    assert ours() == []
    checks.refuse_to_serve()  # does not raise


def test_e001_shared_mode_with_the_default_secret_key(shared):
    shared.SECRET_KEY = shared.DEFAULT_SECRET_KEY
    [problem] = checks.check_shared_mode()
    assert problem.id == "traces.E001"
    assert "needs its own DJANGO_SECRET_KEY" in problem.msg
    assert shared.SECRET_KEY not in problem.msg + (problem.hint or "")
    assert ours() == ["traces.E001"]


def test_e002_shared_mode_with_debug(shared):
    shared.DEBUG = True
    [problem] = checks.check_shared_mode()
    assert problem.id == "traces.E002"
    assert "refuses to run with DJANGO_DEBUG=1" in problem.msg
    assert ours() == ["traces.E002"]


def test_shared_mode_with_its_own_key_and_no_debug_passes(shared):
    assert ours() == []


def test_e003_an_inspector_key_that_does_not_parse(monkeypatch):
    monkeypatch.setenv("INSPECTOR_MAX_DEPTH", "deep")
    monkeypatch.setenv("INSPECTOR_PROXY_READ_TIMEOUT", "inf")
    problems = checks.check_environment()
    assert ids(problems) == ["traces.E003", "traces.E003"]
    text = " ".join(problem.msg for problem in problems)
    assert "INSPECTOR_MAX_DEPTH='deep' is not a whole number" in text
    assert "INSPECTOR_PROXY_READ_TIMEOUT='inf' is not a number" in text
    assert ours() == ["traces.E003", "traces.E003"]


def test_e003_a_variable_settings_py_reads(settings):
    settings.INSPECTOR_ENVIRONMENT_PROBLEMS = [
        "INSPECTOR_DB_POOL_MAX='many' is not a whole number."
    ]
    [problem] = checks.check_environment()
    assert problem.id == "traces.E003"
    assert problem.msg.startswith("INSPECTOR_DB_POOL_MAX=")


def test_e003_reaches_from_the_environment_to_manage_check():
    """SECURE_HSTS_SECONDS is read by settings.py itself (in shared mode): a bad value no
    longer stops settings with a traceback but is reported by the check, named."""
    result = manage(
        "check", ALLOWED_HOSTS="inspector.example.com",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50), SECURE_HSTS_SECONDS="a year",
    )  # fmt: skip
    assert result.returncode != 0
    assert "(traces.E003) SECURE_HSTS_SECONDS='a year' is not a whole number." in result.stderr


def test_e004_an_unknown_queue_mode(settings):
    settings.INSPECTOR_QUEUE = "redsi"
    [problem] = checks.check_queue()
    assert problem.id == "traces.E004"
    assert "INSPECTOR_QUEUE='redsi'" in problem.msg
    assert ours() == ["traces.E004"]


def test_e005_an_upstream_ca_bundle_that_is_no_readable_file(settings, tmp_path):
    settings.INSPECTOR_UPSTREAM_CA_BUNDLE = str(tmp_path / "missing.pem")
    [problem] = checks.check_upstream_ca_bundle()
    assert problem.id == "traces.E005" and "missing.pem" in problem.msg
    assert ours() == ["traces.E005"]
    settings.INSPECTOR_UPSTREAM_CA_BUNDLE = str(tmp_path)  # a folder is no bundle either
    assert ids(checks.check_upstream_ca_bundle()) == ["traces.E005"]
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    settings.INSPECTOR_UPSTREAM_CA_BUNDLE = str(bundle)
    assert checks.check_upstream_ca_bundle() == []


@pytest.mark.parametrize("mode", checks.QUEUE_MODES)
def test_every_queue_mode_passes(settings, mode):
    settings.INSPECTOR_QUEUE = mode
    assert checks.check_queue() == []


def test_w001_an_unknown_inspector_key(settings):
    settings.INSPECTOR = {"CALLS_PER_PAGE": 200, "MAX_DEPTH": 10}
    [problem] = checks.check_inspector_keys()
    assert problem.id == "traces.W001"
    assert "'CALLS_PER_PAGE'" in problem.msg
    assert ours() == ["traces.W001"]
    checks.refuse_to_serve()  # a warning does not stop the server
    assert inspector_settings()["MAX_DEPTH"] == 10


def test_refuse_to_serve_names_each_error(shared):
    shared.SECRET_KEY = shared.DEFAULT_SECRET_KEY
    shared.DEBUG = True
    shared.SILENCED_SYSTEM_CHECKS = ["traces.E001", "traces.E002"]
    with pytest.raises(ImproperlyConfigured) as refused:
        checks.refuse_to_serve()
    assert "(traces.E001) Shared mode" in str(refused.value)
    assert "(traces.E002) Shared mode refuses to run with DJANGO_DEBUG=1" in str(refused.value)


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=server_env(**env), capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_asgi_application_refuses_unsafe_shared_settings():
    """What daphne imports (`inspector.asgi:application`) raises before anything serves."""
    result = subprocess.run(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(free_port()),
         "inspector.asgi:application"],
        cwd=ROOT, env=server_env(**UNSAFE_SHARED), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode != 0
    assert "ImproperlyConfigured: The server refuses to start: (traces.E001)" in result.stderr
    assert "needs its own DJANGO_SECRET_KEY" in result.stderr


def test_runserver_refuses_unsafe_shared_settings():
    result = manage("runserver", "--noreload", f"127.0.0.1:{free_port()}", **UNSAFE_SHARED)
    assert result.returncode != 0
    assert "(traces.E001)" in result.stderr


def test_the_asgi_application_refuses_a_variable_that_does_not_parse():
    result = subprocess.run(
        [sys.executable, "-c", "import inspector.asgi"],
        cwd=ROOT, env=server_env(INSPECTOR_LIVE_SESSIONS="lots"),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode != 0
    assert "(traces.E003) INSPECTOR_LIVE_SESSIONS='lots' is not a whole number." in result.stderr


def test_w002_more_pooled_connections_than_postgresql_accepts(settings, db):
    """Asked of the real server: its max_connections against processes x pool size."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the connection budget is PostgreSQL's (CI's second pass)")
    if not settings.DATABASES["default"].get("OPTIONS", {}).get("pool"):
        pytest.skip("pooling is off (INSPECTOR_DB_POOL=0 or PgBouncer mode)")
    settings.INSPECTOR_DB_PROCESSES = 1
    assert checks.check_connection_budget(databases=["default"]) == []
    settings.INSPECTOR_DB_PROCESSES = 10_000
    [problem] = checks.check_connection_budget(databases=["default"])
    assert problem.id == "traces.W002"
    assert "10000 processes" in problem.msg and "max_connections" in problem.msg
    assert "INSPECTOR_DB_PGBOUNCER" in problem.hint
    assert checks.check_connection_budget() == []  # a plain `check` does not ask the server
