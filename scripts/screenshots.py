"""Screenshots of the trace page and the post-mortem for the README, from the bundled sample,
and of the "On this machine" page over a fake home.

Run `make screenshots`: it serves a throwaway database with daphne on a free loopback
port, loads the sample, and writes docs/screenshots/*.png with Chromium (Playwright).
The server's HOME is a temporary folder laid out like an agent user's, from the session
files of ../shared/agents and ../shared/corpus (copied there, never into the repository;
the machine page's shots are left out when those folders are absent).
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
sys.path.insert(0, str(ROOT))  # tests.watch.fakehome lays the fake home out
OUT = ROOT / "docs" / "screenshots"
PYTHON = sys.executable
SHOTS = [
    # (file, path under the trace, theme, full page, viewport width)
    ("trace-page.png", "", "light", False, 1360),
    ("trace-page-dark.png", "", "dark", False, 1360),
    ("trace-page-phone.png", "", "light", False, 390),
    ("trace-page-phone-dark.png", "", "dark", False, 390),
    ("postmortem.png", "postmortem", "light", True, 1360),
    ("postmortem-phone-dark.png", "postmortem", "dark", False, 390),
    ("call-inspector.png", "calls/3/", "dark", False, 1360),
    ("call-inspector-phone.png", "calls/3/", "light", False, 390),
]
MACHINE_SHOTS = [
    # (file, theme, viewport width): the machine page, one store being watched
    ("machine.png", "light", 1280),
    ("machine-dark.png", "dark", 1280),
    ("machine-phone.png", "light", 390),
    ("machine-phone-dark.png", "dark", 390),
]
CORPUS, AGENTS = ROOT.parent / "shared" / "corpus", ROOT.parent / "shared" / "agents"


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
        machine = fake_home(Path(folder) / "home", env)
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
            deadline = time.monotonic() + 90  # a busy machine starts daphne slowly
            while True:
                try:
                    urllib.request.urlopen(base + "/", timeout=5)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=chromium(),
                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
                )
                for name, path, theme, full, width in SHOTS:
                    height = 1000 if width > 600 else 844  # a phone's screen
                    page = browser.new_page(
                        viewport={"width": width, "height": height}, color_scheme=theme
                    )
                    page.goto(base + trace_path + path)
                    page.wait_for_timeout(1500)  # charts draw
                    page.screenshot(path=OUT / name, full_page=full)
                    page.close()
                    print(f"wrote {OUT / name}")
                if machine:
                    machine_shots(browser, base)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)


def fake_home(home: Path, env: dict[str, str]) -> bool:
    """Point the server's HOME at a fake home of agent sessions; False without the corpus."""
    if not (CORPUS.is_dir() and AGENTS.is_dir()):
        print("no ../shared/corpus or ../shared/agents: the machine page is left out")
        return False
    from tests.watch.fakehome import build_home
    from traces.core.discovery import STORES

    build_home(home, CORPUS, AGENTS)
    env["HOME"] = str(home)
    for store in STORES:
        env.pop(store.env, None)
    return True


def machine_shots(browser, base: str) -> None:
    """The machine page after "Import and keep watching" on Claude Code's store."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(base + "/machine/")
    page.click("#store-claude-code button[value=watch]")
    for _ in range(100):  # its first pass: the card says what it imported
        if "imported;" in page.inner_text("#store-claude-code"):
            break
        page.wait_for_timeout(200)
        page.goto(base + "/machine/")
    page.close()
    for name, theme, width in MACHINE_SHOTS:
        page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=theme)
        page.goto(base + "/machine/")
        if width < 600:  # the folded list too: its long folders must wrap on a phone
            page.click(".store-absent summary")
            page.evaluate("window.scrollTo(0, 0)")  # the sticky bar back at the top
        page.screenshot(path=OUT / name, full_page=True)
        page.close()
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
