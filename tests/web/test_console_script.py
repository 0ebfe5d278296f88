"""The loop-inspector console script and the package's contents.

The core commands run without Django (and manage.py's run the same code); serve, tail,
ingest and manage go through Django; the templates and static files ship in the package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.core.builders import log, pair, response, tool_use, user
from tests.live.servers import free_port
from traces.core.reading.sample import sample_bytes

ROOT = Path(__file__).resolve().parent.parent.parent
NO_DJANGO = (
    "import sys\n"
    "from inspector.cli import main\n"
    "status = main(sys.argv[1:])\n"
    "assert 'django' not in sys.modules, 'a core command set up Django'\n"
    "sys.exit(status)\n"
)


def script(*args: str | Path, cwd: Path = ROOT, env: dict | None = None):
    """The console script's code path, run as a fresh process that must not load Django."""
    return subprocess.run(
        [sys.executable, "-c", NO_DJANGO, *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def sample_file(tmp_path):
    path = tmp_path / "calendar.jsonl"
    path.write_bytes(sample_bytes())
    return path


@pytest.fixture
def halted_file(tmp_path):
    path = tmp_path / "halted.jsonl"
    path.write_bytes(log(pair([user("go")], response([tool_use("t1", path="a")], "tool_use"))))
    return path


def test_analyze_runs_the_core_without_django(sample_file):
    result = script("analyze", sample_file, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "loop-inspector/report/v1"
    assert report["totals"]["calls"] == 4


def test_lint_exit_status_follows_fail_on(halted_file):
    failed = script("lint", halted_file)
    assert failed.returncode == 1
    assert "halted.jsonl:1: error [dangling-tool-call]" in failed.stdout
    assert script("lint", halted_file, "--fail-on", "never").returncode == 0
    unknown = script("lint", halted_file, "--select", "no-such-rule")
    assert unknown.returncode == 1 and "unknown rule(s): no-such-rule" in unknown.stderr


def test_report_writes_the_same_html_as_the_management_command(sample_file, tmp_path, capsys):
    ours = tmp_path / "script.html"
    result = script("report", sample_file, "--html", ours, "--md", tmp_path / "script.md")
    assert result.returncode == 0, result.stderr
    call_command("report", str(sample_file), "--html", str(tmp_path / "django.html"))
    assert ours.read_bytes() == (tmp_path / "django.html").read_bytes()
    page = ours.read_text()
    assert "<style>" in page and "--accent" in page  # the stylesheet, read from the package
    assert (tmp_path / "script.md").read_text().startswith("#")


@pytest.mark.parametrize("command", ["analyze", "lint", "report"])
def test_a_core_command_builds_its_own_subparser_only_with_the_same_help(command, capsys):
    """The process running `report` parses with the report subparser alone (building all
    thirteen costs more than parsing): same options, same help as the whole parser's."""
    from inspector.cli import CORE_COMMANDS, _parser

    def subcommands(parser) -> set[str]:
        return {name for action in parser._subparsers._group_actions for name in action.choices}

    assert command in CORE_COMMANDS
    own, whole = _parser(command), _parser()
    assert subcommands(own) == {command}
    assert {"serve", "tail", "manage", *CORE_COMMANDS} <= subcommands(whole)
    helps = []
    for parser in (own, whole):
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--help"])
        helps.append(capsys.readouterr().out)
    assert helps[0] == helps[1] and f"loop-inspector {command}" in helps[0]


def test_a_missing_file_is_a_clear_error_not_a_traceback(tmp_path):
    result = script("report", tmp_path / "absent.jsonl", "--html", tmp_path / "out.html")
    assert result.returncode == 1
    assert "absent.jsonl: No such file or directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_manage_py_core_commands_skip_django(sample_file):
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['manage.py', 'analyze', {str(sample_file)!r}]\n"
        "try:\n"
        "    runpy.run_path('manage.py', run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "assert 'django' not in sys.modules, 'manage.py analyze set up Django'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "calls     4 in 1 loop," in result.stdout


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PYTEST_CURRENT_TEST")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'script.sqlite3'}"
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def _cli(*args: str | Path, env: dict, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "inspector.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ingest_and_manage_go_through_django(sample_file, tmp_path):
    env = _env(tmp_path)
    migrated = _cli("manage", "migrate", "--noinput", "-v", "0", env=env)
    assert migrated.returncode == 0, migrated.stderr
    stored = _cli("ingest", sample_file, "--base-url", "http://example.test", env=env)
    assert stored.returncode == 0, stored.stderr
    assert "http://example.test/traces/" in stored.stdout and "4 calls" in stored.stdout
    helped = _cli("tail", "--help", env=env)
    assert helped.returncode == 0 and "--from-end" in helped.stdout


def test_serve_migrates_and_answers(tmp_path):
    """`serve` on a fresh database: migrates, loads the sample when asked, serves pages."""
    env = _env(tmp_path)
    port = free_port()
    log_path = tmp_path / "serve.log"
    with open(log_path, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "inspector.cli", "serve", "--port", str(port), "--sample"],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        body = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as page:
                    body = page.read()
                    break
            except OSError:
                time.sleep(0.3)
        assert b"Sample: calendar assistant" in body, log_path.read_text()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/css/app.css") as css:
            assert css.status == 200
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_the_package_data_globs_cover_every_template_and_static_file():
    """What `pip install .` ships: every file under traces/templates and traces/static."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["traces"]
    package = ROOT / "traces"
    shipped = {path for pattern in patterns for path in package.glob(pattern) if path.is_file()}
    present = {
        path
        for folder in ("templates", "static")
        for path in (package / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert present and present <= shipped, sorted(map(str, present - shipped))
    assert config["project"]["scripts"]["loop-inspector"] == "inspector.cli:main"


def test_templates_and_static_files_live_in_the_package_only():
    """Files left at the top level would be served by a checkout but missing from the wheel:
    after a merge, `git mv` them under traces/templates or traces/static."""
    strays = [name for name in ("templates", "static") if (ROOT / name).exists()]
    assert not strays, f"move {strays} under traces/ (they are not in the package)"
