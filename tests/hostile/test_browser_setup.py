"""A machine with no Chromium and no internet: `make test`'s browser step says why in one
loud line and succeeds, and the browser tests are skipped with that reason."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


def no_browser_env(tmp_path) -> dict[str, str]:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PLAYWRIGHT_CHROMIUM"}
    env.update(
        PATH=str(empty),  # no chromium, no apt-get
        DEBIAN_CHROMIUM_PATH=str(empty / "chromium"),
        PLAYWRIGHT_BROWSERS_PATH=str(empty),
        PLAYWRIGHT_DOWNLOAD_HOST="http://127.0.0.1:9",  # nothing listens: the download fails
    )
    return env


def test_no_browser_and_no_internet_skips_browser_tests_loudly(tmp_path):
    env = no_browser_env(tmp_path)
    setup = subprocess.run(
        [sys.executable, "tests/browser_setup.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert setup.returncode == 0
    loud = [line for line in setup.stdout.splitlines() if "BROWSER TESTS SKIPPED" in line]
    assert len(loud) == 1 and "apt-get install chromium" in loud[0]
    suite = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "browser",
         "tests/browser/test_upload_and_inspect.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert suite.returncode == 0, suite.stdout[-2000:]
    assert "skipped" in suite.stdout and "BROWSER TESTS SKIPPED" in suite.stdout
