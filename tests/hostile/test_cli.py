"""The commands answer hostile files with one clear line and a non-zero exit, never a
traceback (run as real processes, as a user would)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.hostile.cases import by_id

REFUSED = ["yaml-deep", "yaml-set", "gzip-bomb", "array-3M-objects"]


def manage(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", ["analyze", "lint"])
@pytest.mark.parametrize("case_id", REFUSED)
def test_commands_refuse_hostile_files_without_a_traceback(tmp_path, command, case_id):
    case = by_id()[case_id]
    path = tmp_path / case.filename
    path.write_bytes(case.data)
    done = manage(command, str(path))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert case.says in done.stderr


def test_analyze_reports_out_of_range_numbers_as_line_errors(tmp_path):
    path = tmp_path / "usage.jsonl"
    path.write_bytes(by_id()["usage-2^63"].data)
    done = manage("analyze", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert "out of range" in done.stdout
