"""Vendor axe-core into tests/browser/vendor/axe-core/ from the npm registry.

The accessibility browser test (tests/browser/test_accessibility.py) injects axe.min.js
into each page with Playwright; the file lives beside the tests, never in traces/static/,
so the app never serves it. To refresh: `.venv/bin/python scripts/vendor_axe.py 4.14.1`
(or another version), then update the version in the folder's README.md and rerun the test.
It runs `npm pack axe-core@<version>` in a temporary folder and keeps axe.min.js and the
LICENSE (MPL-2.0) only.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "tests" / "browser" / "vendor" / "axe-core"
KEPT = ("axe.min.js", "LICENSE")
DEFAULT_VERSION = "4.14.1"


def vendor(version: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is not on PATH: install Node.js to refresh the vendored axe-core")
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([npm, "pack", f"axe-core@{version}", "--silent"], cwd=work, check=True)
        (tarball,) = Path(work).glob("axe-core-*.tgz")
        with tarfile.open(tarball) as archive:
            for name in KEPT:
                member = archive.extractfile(f"package/{name}")
                if member is None:
                    sys.exit(f"axe-core@{version} has no {name}")
                (VENDOR / name).write_bytes(member.read())
    print(f"axe-core {version}: {', '.join(KEPT)} written to {VENDOR.relative_to(ROOT)}")


if __name__ == "__main__":
    vendor(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_VERSION)
