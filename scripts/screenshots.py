"""Screenshots of the trace page and the post-mortem for the README, from the bundled sample.

Run `make screenshots`: it serves a throwaway database with daphne on a free loopback
port, loads the sample, and writes docs/screenshots/*.png with Chromium (Playwright).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
PYTHON = sys.executable
SHOTS = [
    # (file, path under the trace, theme, full page)
    ("trace-page.png", "", "light", False),
    ("trace-page-dark.png", "", "dark", False),
    ("postmortem.png", "postmortem", "light", True),
    ("call-inspector.png", "calls/3/", "dark", False),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def chromium() -> str | None:
    for path in ("/usr/bin/chromium", shutil.which("chromium") or ""):
        if path and os.path.exists(path):
            return path
    return None


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder}/shots.sqlite3"}
        env.pop("REDIS_URL", None)
        manage = [PYTHON, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
        loaded = subprocess.run(
            [*manage, "load_sample"], env=env, check=True, cwd=ROOT, capture_output=True, text=True
        ).stdout
        trace_path = loaded.strip().split(": ", 1)[1]
        port = free_port()
        server = subprocess.Popen(
            [
                str(Path(PYTHON).parent / "daphne"),
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "inspector.asgi:application",
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(100):
                try:
                    urllib.request.urlopen(base + "/", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=chromium(),
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                for name, path, theme, full in SHOTS:
                    page = browser.new_page(
                        viewport={"width": 1360, "height": 1000}, color_scheme=theme
                    )
                    page.goto(base + trace_path + path)
                    page.wait_for_timeout(1500)  # charts draw
                    page.screenshot(path=OUT / name, full_page=full)
                    page.close()
                    print(f"wrote {OUT / name}")
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
