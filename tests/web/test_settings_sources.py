"""One settings source: every INSPECTOR key from settings.INSPECTOR, else its INSPECTOR_<KEY>
environment variable (parsed by its default's type), else traces.conf.DEFAULTS; the
variables settings.py reads itself keep working as documented; no pytest detection."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.test import override_settings

from tests.live.servers import ROOT, server_env
from traces import conf
from traces.conf import DEFAULTS, inspector_settings
from traces.environment import BadValue, Environment, parse


@pytest.fixture
def environ(monkeypatch):
    """The process environment for one test; the cached settings read it afresh before
    and after."""
    inspector_settings.cache_clear()
    conf.price_table.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    inspector_settings.cache_clear()
    conf.price_table.cache_clear()


def another_value(default):
    """A value of the default's type that is not the default, and its text."""
    if isinstance(default, bool):
        return (not default), ("no" if default else "yes")
    if isinstance(default, int):
        return default + 7, str(default + 7)
    if isinstance(default, float):
        return default + 0.5, str(default + 0.5)
    return "/somewhere/else.json", "/somewhere/else.json"


@pytest.mark.parametrize("key", sorted(DEFAULTS))
def test_every_key_is_read_from_its_environment_variable(environ, key):
    value, text = another_value(DEFAULTS[key])
    environ.setenv(f"INSPECTOR_{key}", text)
    got = inspector_settings()[key]
    assert got == value and type(got) is type(DEFAULTS[key])


def test_precedence_inspector_over_the_environment_over_the_defaults(environ):
    environ.setenv("INSPECTOR_MAX_DEPTH", "100")
    environ.setenv("INSPECTOR_LIVE_SESSIONS", "5")
    with override_settings(INSPECTOR={"MAX_DEPTH": 50}):
        conf_now = inspector_settings()
        assert conf_now["MAX_DEPTH"] == 50  # settings.INSPECTOR
        assert conf_now["LIVE_SESSIONS"] == 5  # the environment
        assert conf_now["JOB_MAX_ATTEMPTS"] == DEFAULTS["JOB_MAX_ATTEMPTS"]  # the default
    assert inspector_settings()["MAX_DEPTH"] == 100
    assert conf.limits().max_depth == 100


def test_a_value_that_does_not_parse_leaves_the_default_and_says_so(environ):
    environ.setenv("INSPECTOR_REPORT_CACHE_ENTRIES", "eight")
    environ.setenv("INSPECTOR_LIVE_REPORT_INTERVAL", "")  # empty: unset, for a number
    assert inspector_settings()["REPORT_CACHE_ENTRIES"] == DEFAULTS["REPORT_CACHE_ENTRIES"]
    assert inspector_settings()["LIVE_REPORT_INTERVAL"] == DEFAULTS["LIVE_REPORT_INTERVAL"]
    _values, problems = conf.from_environment()
    assert problems == ["INSPECTOR_REPORT_CACHE_ENTRIES='eight' is not a whole number."]


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", True), ("true", True), ("Yes", True), (" TRUE ", True), ("0", False),
     ("false", False), ("NO", False)],
)  # fmt: skip
def test_booleans_read_as_1_0_true_false_yes_no(text, value):
    assert parse("INSPECTOR_FLAG", text, False) is value
    assert parse("INSPECTOR_FLAG", text, True) is value


@pytest.mark.parametrize(
    ("text", "default"),
    [("maybe", False), ("on", True), ("1.5", 3), ("0x10", 3), ("ten", 1.0), ("nan", 1.0)],
)
def test_bad_values_name_their_variable(text, default):
    with pytest.raises(BadValue, match=r"^INSPECTOR_THING="):
        parse("INSPECTOR_THING", text, default)


def test_numbers_and_text():
    assert parse("X", " 2_000 ", 1) == 2000
    assert parse("X", "2.5", 1.0) == 2.5
    assert parse("X", "3", 1.0) == 3.0 and isinstance(parse("X", "3", 1.0), float)
    assert parse("X", "", "default") == ""  # an empty text is a value (upstream off)
    assert Environment({"X": ""}).get("X", "https://default") == ""
    assert Environment({}).get("X", 4) == 4


def test_a_long_bad_value_is_quoted_short():
    env = Environment({"INSPECTOR_DB_POOL_MAX": "x" * 500})
    assert env.get("INSPECTOR_DB_POOL_MAX", 16) == 16
    [problem] = env.problems
    assert len(problem) < 100 and "…" in problem


def test_capture_settings_are_ordinary_keys(environ):
    assert inspector_settings()["PROXY_READ_TIMEOUT"] == 600.0
    assert inspector_settings()["OTLP_MAX_BYTES"] == 16 * 1024 * 1024
    with override_settings(INSPECTOR={"PROXY_MAX_REQUEST_BYTES": 10}):
        assert inspector_settings()["PROXY_MAX_REQUEST_BYTES"] == 10


def test_calls_per_page_is_gone():
    assert "CALLS_PER_PAGE" not in DEFAULTS


def test_inspector_prices_is_the_prices_key(environ, tmp_path, settings):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-own-model": {"input": 1.0, "output": 2.0}}))
    assert conf.price_table().lookup("my-own-model") is None
    environ.setenv("INSPECTOR_PRICES", str(prices))
    inspector_settings.cache_clear()
    conf.price_table.cache_clear()
    assert inspector_settings()["PRICES"] == str(prices)
    assert conf.price_table().lookup("my-own-model")[1].output == 2.0
    assert not hasattr(settings, "INSPECTOR_PRICES")  # one path, not two


def test_testserver_is_allowed_by_the_test_environment(settings):
    """pytest-django's test environment (Django's setup_test_environment) adds the test
    client's host; settings.py no longer does it by guessing it runs under pytest."""
    assert "testserver" in settings.ALLOWED_HOSTS


SHOW = (
    "import json; from django.conf import settings as s; print(json.dumps({"
    "'hosts': s.ALLOWED_HOSTS, 'capacity': s.CHANNEL_LAYERS['default']['CONFIG']['capacity'],"
    "'pool': s.DATABASES['default'].get('OPTIONS', {}).get('pool'),"
    "'hsts': s.SECURE_HSTS_SECONDS, 'problems': s.INSPECTOR_ENVIRONMENT_PROBLEMS}))"
)


def settings_in_a_process(**env: str) -> dict:
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SHOW],
        cwd=ROOT, env=server_env(**env), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_settings_py_variables_keep_working_and_no_pytest_detection():
    shown = settings_in_a_process(
        PYTEST_CURRENT_TEST="tests/x.py::test (call)", _="/venv/bin/pytest",
        ALLOWED_HOSTS="inspector.example.com", DJANGO_SECRET_KEY="k" * 50,
        REDIS_URL="redis://127.0.0.1:1/0", INSPECTOR_QUEUE="embedded",
        INSPECTOR_CHANNEL_CAPACITY="123", SECURE_HSTS_SECONDS="60",
        DATABASE_URL="postgres://nobody@127.0.0.1:1/none", INSPECTOR_DB_POOL_MIN="1",
        INSPECTOR_DB_POOL_MAX="3", INSPECTOR_DB_POOL_TIMEOUT="2.5",
    )  # fmt: skip
    assert shown["hosts"] == ["inspector.example.com"]  # no "testserver" under pytest
    assert shown["capacity"] == 123
    assert shown["hsts"] == 60
    assert shown["pool"] == {"min_size": 1, "max_size": 3, "timeout": 2.5}
    assert shown["problems"] == []


def test_settings_py_variables_that_do_not_parse_are_kept_for_the_check():
    shown = settings_in_a_process(
        REDIS_URL="redis://127.0.0.1:1/0", INSPECTOR_QUEUE="embedded",
        INSPECTOR_CHANNEL_CAPACITY="plenty",
    )  # fmt: skip
    assert shown["capacity"] == 2000
    assert shown["problems"] == ["INSPECTOR_CHANNEL_CAPACITY='plenty' is not a whole number."]
