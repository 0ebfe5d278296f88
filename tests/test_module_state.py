"""scripts/check_module_state.py: the tree has no module-level mutable state, and the
checker finds each kind it is meant to find (and nothing it is meant to allow)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_module_state.py"

BAD = """
import asyncio
import collections
import threading
from concurrent.futures import ThreadPoolExecutor
from weakref import WeakKeyDictionary

cache = {}
seen: set[str] = set()
ORDER = ["a", "b"]
TABLE = {"a": 1}
NAMES = {"a", "b"}
squares = {n: n * n for n in range(3)}
lock = threading.Lock()
loop_lock = asyncio.Lock()
counts = collections.Counter()
by_loop = WeakKeyDictionary()
pool = ThreadPoolExecutor(2)
client = Client()
ROWS = ({"a": 1},)
MORE = [1] + [2]
if True:
    late = []
try:
    guarded = dict()
except ImportError:
    pass
total = 0
total += 1


def bump():
    global total
    total = 2
"""

GOOD = """
import logging
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

log = logging.getLogger(__name__)
ORDER = ("a", "b")
NAMES = frozenset({"a", "b"})
TABLE = MappingProxyType({"a": 1})
PATTERN = re.compile("x")
LIMIT = 10
RATIO = 0.5
TEXT = "text"
RAW = b"raw"
ALL = NAMES | {"c"}
urlpatterns_like = ORDER


@dataclass(frozen=True)
class Limits:
    most: int


class Pair(NamedTuple):
    a: int
    b: int


DEFAULT_LIMITS = Limits(3)
ORIGIN = Pair(0, 0)


class Holder:
    items = []  # a class attribute: not module-level

    def __init__(self):
        self.cache = {}


def local():
    found = {}
    found["a"] = 1
    return found
"""


def run(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_the_tree_has_no_module_level_mutable_state():
    done = run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""


def test_each_kind_of_mutable_binding_is_reported_with_its_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent(BAD))
    done = run(bad)
    assert done.returncode == 1
    lines = bad.read_text().splitlines()
    found = {}
    for line in done.stdout.splitlines():
        where, number, rest = line.split(":", 2)
        assert where == str(bad)
        found[rest.split()[0]] = int(number)
    expected = [
        "cache",
        "seen",
        "ORDER",
        "TABLE",
        "NAMES",
        "squares",
        "lock",
        "loop_lock",
        "counts",
        "by_loop",
        "pool",
        "client",
        "ROWS",
        "MORE",
        "late",
        "guarded",
    ]
    assert set(found) == {*expected, "total"}
    for name in expected:  # each reported at its own binding
        assert lines[found[name] - 1].strip().startswith(name), (name, found[name])
    # `total`: the augmented assignment and the `global` statement, both reported.
    reported_total = [line for line in done.stdout.splitlines() if ": total " in line]
    assert len(reported_total) == 2
    assert any("global" in line for line in reported_total)
    assert "module-level mutable state" in done.stdout
    assert "traces/stores.py" in done.stderr


def test_immutable_values_loggers_and_local_state_pass(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent(GOOD))
    done = run(good)
    assert done.returncode == 0, done.stdout
    assert done.stdout == ""


def test_a_folder_is_walked(tmp_path):
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "good.py").write_text(textwrap.dedent(GOOD))
    (tmp_path / "package" / "state.py").write_text("registry = {}\n")
    migrations = tmp_path / "package" / "migrations"
    migrations.mkdir()
    (migrations / "0001_initial.py").write_text("operations = []\n")
    done = run(tmp_path / "package")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"{tmp_path / 'package' / 'state.py'}:1: registry is bound to a dict "
        "(module-level mutable state)"
    ]
