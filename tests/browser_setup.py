"""Make sure a Chromium exists for the Playwright tests before the suite runs.

In order: Debian's /usr/bin/chromium (or PLAYWRIGHT_CHROMIUM, or a chromium on PATH);
else `apt-get install chromium` when running as root with apt-get; else Playwright's own
build (`playwright install chromium`, which needs the internet). When all of these fail,
one loud line says why and how to fix it, and the browser tests are skipped (see
`tests/conftest.py`): the rest of the suite still decides whether `make test` passes.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

DEBIAN_CHROMIUM = os.environ.get("DEBIAN_CHROMIUM_PATH", "/usr/bin/chromium")
"""Where Debian puts it; DEBIAN_CHROMIUM_PATH moves it (to test the fallbacks)."""
HOW_TO_FIX = (
    "install one with `sudo apt-get install chromium` (Debian/Ubuntu), or run "
    "`.venv/bin/playwright install chromium` on a machine with internet access"
)


def system_chromium() -> str | None:
    """A Chromium installed on the system (or named by PLAYWRIGHT_CHROMIUM)."""
    for candidate in (
        os.environ.get("PLAYWRIGHT_CHROMIUM"),
        DEBIAN_CHROMIUM,
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def playwright_chromium() -> str | None:
    """Playwright's own downloaded build, if `playwright install chromium` has run."""
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache/ms-playwright")
    patterns = ("chromium-*/chrome-linux*/chrome", "chromium_headless_shell-*/chrome-*/*shell")
    for pattern in patterns:
        found = sorted(glob.glob(os.path.join(root, pattern)))
        if found:
            return found[-1]
    return None


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when a Chromium is available."""
    if system_chromium() or playwright_chromium():
        return None
    return (
        f"BROWSER TESTS SKIPPED: no Chromium at {DEBIAN_CHROMIUM} nor Playwright's; {HOW_TO_FIX}."
    )


def _run(command: list[str], timeout: float) -> bool:
    try:
        return subprocess.call(command, timeout=timeout) == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _apt_install() -> bool:
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("apt-get"):
        return False
    print("No Chromium found: installing Debian's (apt-get install chromium).")
    env_install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium"]
    return _run(env_install, 900) or (_run(["apt-get", "update"], 300) and _run(env_install, 900))


def main() -> int:
    if browser_missing() is None:
        return 0
    if _apt_install() and browser_missing() is None:
        return 0
    print("No Chromium found: fetching Playwright's build (playwright install chromium).")
    _run([sys.executable, "-m", "playwright", "install", "chromium"], 900)
    reason = browser_missing()
    if reason:
        print("!" * 8 + " " + reason + " " + "!" * 8, flush=True)
    return 0  # never fails `make test` by itself: the browser tests are skipped instead


if __name__ == "__main__":
    sys.exit(main())
