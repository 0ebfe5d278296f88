"""Real daphne processes for the live tests and benchmark: migrate, start, wait, stop."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_env(**overrides: str) -> dict[str, str]:
    """This environment, minus what ties a process to the test run, plus overrides
    (an empty value removes the variable)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE",)}
    env["DJANGO_SETTINGS_MODULE"] = "inspector.settings"
    # Servers run their queue tasks in-process unless a test starts workers for them.
    env["INSPECTOR_QUEUE"] = "embedded"
    for name, value in overrides.items():
        if value:
            env[name] = value
        else:
            env.pop(name, None)
    database = env.get("DATABASE_URL", "")
    if "INSPECTOR_DATA_DIR" not in env and database.startswith("sqlite:///"):
        # Originals beside the server's own database (a benchmark's temporary folder),
        # never in the checkout's ./data, where `make serve` keeps the user's.
        env["INSPECTOR_DATA_DIR"] = str(Path(database.removeprefix("sqlite:///")).parent / "data")
    return env


def migrate(env: dict[str, str], root: Path = ROOT) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=root,
        env=env,
        check=True,
        timeout=300,  # a loaded shared machine (load 13) took over 120 s
    )


@contextmanager
def daphne(
    env: dict[str, str], log_path: Path, port: int | None = None, root: Path = ROOT
) -> Iterator[str]:
    """A daphne serving the project (the tree at `root`: a benchmark's previous one) on a
    loopback port (a free one unless given); yields its base URL."""
    port = port or free_port()
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
             "inspector.asgi:application"],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            _wait_for_port(port, process, log_path)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _wait_for_port(
    port: int, process: subprocess.Popen, log_path: Path, timeout: float = 240
) -> None:
    # On a shared machine at a load of 20, importing the project took 13 s; at a load of
    # 15 with seven helpers at work, a daphne beside a benchmark's took over 90 s.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited: {log_path.read_text(errors='replace')[-2000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"daphne did not listen on {port}: {log_path.read_text()[-2000:]}")


def server_pid(base: str) -> int:
    """The pid of the daphne listening at `base`, read from /proc/net/tcp's inode."""
    port = int(base.rsplit(":", 1)[1])
    inode = ""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port and fields[3] == "0A":
            inode = fields[9]
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) == f"socket:[{inode}]":
                    return int(proc.name)
        except OSError:
            continue
    raise RuntimeError(f"no process listens on {port}")


def process_figures(pid: int, database: str) -> tuple[int, int, float]:
    """(open fds, fds on the SQLite database, RSS MiB) of a process."""
    fds = sqlite = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        fds += 1
        try:
            sqlite += os.readlink(fd).startswith(database) if database else 0
        except OSError:
            continue
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return fds, sqlite, int(line.split()[1]) / 1024
    return fds, sqlite, 0.0
