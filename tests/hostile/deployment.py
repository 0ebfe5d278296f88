"""A small deployment the kill -9 tests shoot at: a daphne, and on PostgreSQL a queue worker.

Both run as real processes on the test's own database (pytest-django's, so the test reads
what they wrote with the ORM) and on one data folder. On SQLite the web process runs the
queue itself (the embedded mode: killing it kills the worker too); on PostgreSQL with Redis
(.ci/run's second pass) it queues to Redis under a queue name of this test's own, and
`manage.py run_huey` does the work, as in production.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

from django.db import connection

from tests.live.servers import ROOT, daphne, server_env, server_pid

STALE_SECONDS = 2
"""JOB_STALE_SECONDS of the processes: a job without a heartbeat for 2 s lost its worker."""


def on_postgres() -> bool:
    return bool(os.environ.get("REDIS_URL")) and connection.vendor == "postgresql"


def shared_database_url() -> str:
    """The URL of the test database pytest-django made, for the processes to share."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return (
        f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        f"/{db['NAME']}"
    )


class Deployment:
    """The web process (restartable) and, on PostgreSQL, worker processes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.postgres = on_postgres()
        overrides = {
            "DATABASE_URL": shared_database_url(),
            "INSPECTOR_DATA_DIR": str(folder),
            "INSPECTOR_BACKGROUND_UPLOAD_BYTES": "4096",
            "INSPECTOR_JOB_STALE_SECONDS": str(STALE_SECONDS),
        }
        if self.postgres:
            overrides |= {
                "INSPECTOR_QUEUE": "redis",
                # Other test runs share this Redis: their workers must not take these tasks.
                "INSPECTOR_QUEUE_NAME": f"kill9-{uuid.uuid4().hex[:12]}",
            }
        else:
            overrides |= {"INSPECTOR_QUEUE": "embedded", "REDIS_URL": ""}
        self.env = server_env(**overrides)
        self.base = ""
        self.web_pid = 0
        self._web = ExitStack()
        self._workers: list[subprocess.Popen] = []
        self._logs = 0

    def _log(self, kind: str) -> Path:
        self._logs += 1
        return self.folder / f"{self._logs:02d}-{kind}.log"

    def start_web(self) -> str:
        self._web = ExitStack()
        self.base = self._web.enter_context(daphne(self.env, self._log("web")))
        self.web_pid = server_pid(self.base)
        return self.base

    def kill_web(self) -> None:
        """kill -9 the web process (and, on SQLite, the queue running inside it)."""
        os.kill(self.web_pid, signal.SIGKILL)
        self._web.close()  # reaps it
        self.base = ""

    def start_worker(self) -> subprocess.Popen:
        """A `manage.py run_huey` worker (PostgreSQL only: on SQLite the web process works)."""
        assert self.postgres
        command = [sys.executable, "manage.py", "run_huey", "--workers", "2"]
        command += ["--worker-type", "thread"]
        with open(self._log("worker"), "wb") as log:
            worker = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        self._workers.append(worker)
        return worker

    def the_worker(self) -> int:
        """The pid of the process doing queue work now."""
        if not self.postgres:
            return self.web_pid
        alive = [w for w in self._workers if w.poll() is None]
        assert len(alive) == 1, alive
        return alive[0].pid

    def kill_worker(self) -> None:
        """kill -9 whatever runs the queue: the worker, or on SQLite the web process."""
        if not self.postgres:
            self.kill_web()
            return
        pid = self.the_worker()
        os.kill(pid, signal.SIGKILL)
        for worker in self._workers:
            if worker.pid == pid:
                worker.wait(10)

    def start(self) -> str:
        """The web process and, on PostgreSQL, a worker (started first: it loads Django while
        the web process does)."""
        if self.postgres:
            self.start_worker()
        return self.start_web()

    def restart_worker(self) -> None:
        """A new process to do the queue's work after `kill_worker`."""
        if self.postgres:
            self.start_worker()
        else:
            self.start_web()

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
            for path in sorted(self.folder.glob("*.log"))
        )

    def close(self) -> None:
        for worker in self._workers:
            if worker.poll() is None:
                worker.terminate()
                try:
                    worker.wait(10)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait(10)
        self._web.close()


def wait_for(condition, what: str, timeout: float = 30.0, every: float = 0.0005):
    """Poll `condition` until it returns something true; fail with `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(every)
    return found
