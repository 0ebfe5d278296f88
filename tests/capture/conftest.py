"""One fake upstream and one real daphne (on its own SQLite file) for the capture tests."""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.capture.fake_upstream import FakeUpstream
from tests.capture.scenario import Script, ports
from tests.live.servers import daphne, migrate, server_env


@dataclass
class LiveServer:
    base: str
    database: Path
    log: Path

    def rows(self, sql: str, *args) -> list[tuple]:
        with sqlite3.connect(self.database, timeout=20) as db:
            return db.execute(sql, args).fetchall()

    def trace_id(self, capture_key: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.rows(
                "SELECT id FROM traces_trace WHERE capture_key = ? ORDER BY created_at DESC",
                capture_key,
            )
            if found:
                return _uuid(found[0][0])
            time.sleep(0.05)
        raise AssertionError(f"no trace was filed under {capture_key}")

    def exports_pending(self) -> int:
        """OTLP exports answered and not yet stored (queued or being stored)."""
        ((count,),) = self.rows(
            "SELECT count(*) FROM traces_job WHERE kind = 'otlp' AND state IN ('queued', 'running')"
        )
        return count

    def wait_for_exports(self, timeout: float = 30.0) -> None:
        """Until every OTLP export answered so far is stored: the receiver answers once an
        export is queued (traces.capture.otlp_queue); its job says when it is stored."""
        deadline = time.monotonic() + timeout
        while self.exports_pending():
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.exports_pending()} OTLP export(s) still queued")
            time.sleep(0.02)
        ((failed,),) = self.rows(
            "SELECT count(*) FROM traces_job WHERE kind = 'otlp' AND state = 'failed'"
        )
        assert not failed, self.rows("SELECT error FROM traces_job WHERE state = 'failed'")

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.base + path, timeout=30) as reply:
            return reply.read()

    def report(self, trace_id: str) -> dict:
        return json.loads(self.get(f"/api/traces/{trace_id}"))

    def wait_report(self, trace_id: str, calls: int, timeout: float = 20.0) -> dict:
        """The report once it covers `calls` calls (it follows each batch within ~1 s)."""
        deadline = time.monotonic() + timeout
        report: dict = {}
        while time.monotonic() < deadline:
            report = self.report(trace_id)
            if len(report.get("calls", [])) >= calls:
                return report
            time.sleep(0.1)
        raise AssertionError(f"the report has {len(report.get('calls', []))} calls, not {calls}")

    def post(self, path: str, body: bytes = b"") -> dict:
        request = urllib.request.Request(self.base + path, data=body, method="POST")
        with urllib.request.urlopen(request, timeout=30) as reply:
            return json.loads(reply.read())


def _uuid(value) -> str:
    text = str(value)
    if len(text) == 32:
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
    return text


@pytest.fixture(scope="session")
def script(corpus) -> Script:
    return Script(corpus)


@pytest.fixture(scope="session")
def upstream(script):
    with FakeUpstream(script, port=ports()) as fake:
        yield fake


@contextmanager
def capture_server(folder: Path, **upstreams: str) -> Iterator[LiveServer]:
    """A daphne on its own SQLite file, with the capture tests' settings and the given
    INSPECTOR_UPSTREAM_* variables."""
    database = folder / "capture.sqlite3"
    env = server_env(
        DATABASE_URL=f"sqlite:///{database}",
        REDIS_URL="",
        DJANGO_SETTINGS_MODULE="tests.capture.proxy_settings",
        **upstreams,
    )
    migrate(env)
    log = folder / "daphne.log"
    with daphne(env, log, ports() or None) as base:
        yield LiveServer(base, database, log)


@pytest.fixture(scope="session")
def inspector_server(upstream, tmp_path_factory):
    with capture_server(
        tmp_path_factory.mktemp("capture-server"),
        INSPECTOR_UPSTREAM_ANTHROPIC=upstream.base,
        INSPECTOR_UPSTREAM_OPENAI=upstream.base + "/v1",
        INSPECTOR_UPSTREAM_GEMINI=upstream.base,
        INSPECTOR_UPSTREAM_OPENROUTER=upstream.base + "/api/v1",
    ) as server:
        yield server
