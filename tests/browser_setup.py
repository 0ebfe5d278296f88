"""Make sure a Chromium exists for the Playwright tests before the suite runs.

Debian's /usr/bin/chromium is used when present (CI installs it with apt); elsewhere
Playwright's own build is fetched once with `playwright install chromium`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

DEBIAN_CHROMIUM = "/usr/bin/chromium"


def main() -> int:
    if os.path.exists(DEBIAN_CHROMIUM) or os.environ.get("PLAYWRIGHT_CHROMIUM"):
        return 0
    if shutil.which("chromium") or shutil.which("chromium-browser"):
        return 0
    print("No Chromium found: fetching Playwright's build (playwright install chromium).")
    return subprocess.call([sys.executable, "-m", "playwright", "install", "chromium"])


if __name__ == "__main__":
    sys.exit(main())
