"""The documentation keeps up with the code (as datasette's tests do): every INSPECTOR key
and every environment variable the settings or the app read is in docs/settings.md, with
the key's variable, type and default as they are; every management command is in the
README or docs/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from traces.checks import QUEUE_MODES
from traces.conf import DEFAULTS, environment_name

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_DOC = (ROOT / "docs" / "settings.md").read_text()
DOCS = "\n".join(
    [
        (ROOT / "README.md").read_text(),
        *(p.read_text() for p in sorted((ROOT / "docs").rglob("*.md"))),
    ]
)
ENVIRONMENT_READ = re.compile(
    r"""(?:environ\.get|getenv|environ\[|\benv\.get)\(?\s*["']([A-Z][A-Z0-9_]*)["']"""
)
"""`os.environ.get("X"`, `os.environ["X"]`, `os.getenv("X"`, settings.py's `env.get("X"`."""
COMMANDS = sorted(
    p.stem
    for p in (ROOT / "traces" / "management" / "commands").glob("*.py")
    if p.stem != "__init__"
)


def key_rows() -> dict[str, list[str]]:
    """The rows of the keys table, by key: [key, variable, type, default, what]."""
    rows = {}
    for line in SETTINGS_DOC.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.fullmatch(r"`[A-Z][A-Z0-9_]*`", cells[0]):
            rows[cells[0].strip("`")] = cells
    return rows


def variables_read() -> set[str]:
    sources = [ROOT / "inspector" / "settings.py", *sorted((ROOT / "traces").rglob("*.py"))]
    return {name for path in sources for name in ENVIRONMENT_READ.findall(path.read_text())}


@pytest.mark.parametrize("key", sorted(DEFAULTS))
def test_every_key_is_documented_with_its_variable_type_and_default(key):
    row = key_rows().get(key)
    assert row is not None, f"docs/settings.md has no row for the INSPECTOR key {key}"
    _key, variable, kind, default, what = row
    assert variable == f"`{environment_name(key)}`"
    assert kind == type(DEFAULTS[key]).__name__
    written = '""' if DEFAULTS[key] == "" else str(DEFAULTS[key])
    assert default.startswith(f"`{written}`"), f"{key}: documented {default}, is {written}"
    assert what


def test_no_documented_key_is_gone():
    assert set(key_rows()) - set(DEFAULTS) == set(), "docs/settings.md documents a removed key"


def test_the_scan_finds_the_variables_it_should():
    """The pattern itself is checked: it sees reads of each kind in settings.py and traces/."""
    found = variables_read()
    assert {"DJANGO_SECRET_KEY", "INSPECTOR_CHANNEL_CAPACITY", "LOOP_INSPECTOR_TOKEN"} <= found


@pytest.mark.parametrize("name", sorted(variables_read()))
def test_every_environment_variable_read_is_documented(name):
    assert f"`{name}`" in SETTINGS_DOC, f"docs/settings.md does not list {name}"


def test_no_variable_is_both_a_key_and_a_settings_variable():
    keys = {environment_name(key) for key in DEFAULTS}
    settings_py = set(ENVIRONMENT_READ.findall((ROOT / "inspector" / "settings.py").read_text()))
    assert keys & settings_py == set()


def test_the_queue_modes_and_check_ids_are_documented():
    for mode in QUEUE_MODES:
        assert f"`{mode}`" in SETTINGS_DOC
    source = (ROOT / "traces" / "checks.py").read_text()
    check_ids = set(re.findall(r'id="(traces\.[EW]\d{3})"', source))
    assert {"traces.E001", "traces.W001"} <= check_ids
    for check_id in sorted(check_ids):
        assert f"| `{check_id}` |" in SETTINGS_DOC, f"docs/settings.md does not list {check_id}"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_management_command_is_documented(command):
    assert re.search(rf"(manage\.py|loop-inspector) {command}\b", DOCS), (
        f"neither the README nor docs/ mention `manage.py {command}`"
    )
