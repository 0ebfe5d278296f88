"""PgBouncer in transaction pooling mode in front of PostgreSQL (INSPECTOR_DB_PGBOUNCER=1).

Issue 26 asks for a documented and tested PgBouncer mode. A real PgBouncer (Debian's
package; .ci/run installs it) is started on a loopback port with transaction pooling and
only 2 server connections, in front of a database of its own; a daphne in PgBouncer mode
serves through it. Uploads, pages, the API and 24 concurrent requests must all work:
with server-side cursors or prepared statements left on, transaction pooling hands a
statement a server connection that never saw its cursor or its PREPARE, and fails.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.live.events import agent_lines, ndjson
from tests.live.servers import daphne, free_port, migrate, server_env

DATABASE = f"pgbouncer_mode_{os.getpid()}"
"""A database of this run's own: two runs on one machine never drop each other's."""
PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}


def _missing(reason: str) -> None:
    """Skip with the reason; in CI (.ci/run sets CI=true) fail instead."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the PgBouncer test)")
    pytest.skip(reason)


@pytest.fixture
def bouncer():
    binary = shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None
    )
    if binary is None:
        _missing("pgbouncer is not installed (apt-get install pgbouncer)")
    try:
        with psycopg.connect(**PG, dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {DATABASE}")
    except psycopg.OperationalError as exc:
        _missing(f"PostgreSQL is not running on 127.0.0.1:5432 ({exc})")
    port = free_port()
    # Its own folder under /tmp: pytest's tmp_path is private to root, and PgBouncer,
    # which refuses to run as root, runs as postgres.
    folder = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    folder.chmod(0o755)
    (folder / "users.txt").write_text('"postgres" ""\n')
    (folder / "pgbouncer.ini").write_text(
        f"[databases]\n{DATABASE} = host=127.0.0.1 port=5432 dbname={DATABASE}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\n"
        f"unix_socket_dir =\nauth_type = trust\nauth_file = {folder / 'users.txt'}\n"
        "pool_mode = transaction\ndefault_pool_size = 2\nmax_client_conn = 200\n"
        f"logfile = {folder / 'pgbouncer.log'}\npidfile = {folder / 'pgbouncer.pid'}\n"
    )
    if os.geteuid() == 0:  # PgBouncer refuses to run as root: it runs as postgres
        for path in (folder, folder / "users.txt", folder / "pgbouncer.ini"):
            shutil.chown(path, "postgres")
    command = [binary, str(folder / "pgbouncer.ini")]
    if os.geteuid() == 0:
        command[1:1] = ["-u", "postgres"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with psycopg.connect(
                    **{**PG, "port": port}, dbname=DATABASE, prepare_threshold=None
                ) as probe:
                    probe.execute("SELECT 1")
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
        with psycopg.connect(**PG, dbname="postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def test_the_app_serves_through_pgbouncer_in_transaction_mode(bouncer, tmp_path):
    direct = f"postgres://postgres@127.0.0.1:5432/{DATABASE}"
    migrate(server_env(DATABASE_URL=direct, REDIS_URL=""))
    env = server_env(
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{bouncer}/{DATABASE}",
        REDIS_URL="",
        INSPECTOR_DB_PGBOUNCER="1",
        INSPECTOR_DATA_DIR=str(tmp_path / "data"),
    )
    with daphne(env, tmp_path / "daphne.log") as base:
        created = []
        for n in range(3):
            reply = httpx.post(
                f"{base}/api/traces?name=bounced-{n}",
                content=ndjson(agent_lines(4)),
                headers={"Content-Type": "application/x-ndjson"},
                timeout=60,
            )
            assert reply.status_code == 201, reply.text
            created.append(reply.json()["id"])
        urls = [f"{base}/traces/{trace}/" for trace in created] * 6 + [f"{base}/"] * 6
        with concurrent.futures.ThreadPoolExecutor(24) as pool:
            statuses = list(pool.map(lambda url: httpx.get(url, timeout=60).status_code, urls))
        assert statuses == [200] * len(urls)
        listed = httpx.get(f"{base}/", timeout=60).text
        assert all(f"bounced-{n}" in listed for n in range(3))
        detail = httpx.get(f"{base}/api/traces/{created[1]}", timeout=60)
        assert detail.status_code == 200 and len(detail.json()["calls"]) == 4
        page = httpx.get(f"{base}/traces/{created[0]}/", timeout=60).text
        assert "bounced-0" in page
