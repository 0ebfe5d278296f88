"""Originals in S3-compatible object storage, against moto's S3 server on loopback.

In this process, the whole scenario of tests/storage/scenario.py runs with the bucket as
the store. Across processes, as several machines would: `manage.py ingest` stores traces
in one process, a daphne serves their downloads in another, a third re-analyses a live
trace the web process stored, each with an empty data folder of its own (so every byte
went through the bucket), and a deletion through the web process empties the bucket.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
import zipfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.test import override_settings

from tests.live.events import agent_lines, ndjson
from tests.live.servers import ROOT, daphne, free_port, migrate, server_env
from tests.storage import scenario

PORTS = range(9200, 9300)
"""Where moto listens: the first free port of this range (any free port if none is)."""
REGION = "us-east-1"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_EC2_METADATA_DISABLED": "true",  # never look for an instance role on the network
}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _port() -> int:
    for port in PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    return free_port()


def _cannot_run(reason: str) -> None:
    """Skip with the reason; in CI (.ci/run sets CI=true) fail instead, so the S3 tests
    cannot silently stop running there."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory) -> str:
    """moto's S3 server (`moto[server]`, a dev dependency) on a loopback port."""
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
    except ImportError as exc:
        _cannot_run(f"moto[server] is not installed ({exc}); run `make setup`")
    log_path = tmp_path_factory.mktemp("moto") / "moto.log"
    port = _port()
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **CREDENTIALS},
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                _cannot_run(f"moto's S3 server did not start: {log_path.read_text()[-500:]}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def s3_env(endpoint: str, bucket: str) -> dict[str, str]:
    return {
        "INSPECTOR_S3_BUCKET": bucket,
        "INSPECTOR_S3_ENDPOINT_URL": endpoint,
        "INSPECTOR_S3_REGION": REGION,
        **CREDENTIALS,
    }


@pytest.fixture
def bucket(s3_endpoint):
    """A new, empty bucket and a client to look into it (independently of our code)."""
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    name = f"loop-inspector-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)

    def listing(prefix: str) -> list[str]:
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=name, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    return name, listing, client


def test_every_kind_of_original_round_trips_through_the_bucket(
    client, db, s3_endpoint, bucket, monkeypatch, django_capture_on_commit_callbacks
):
    from django.conf import settings

    from inspector.settings import s3_storage

    name, listing, s3 = bucket
    for variable, value in s3_env(s3_endpoint, name).items():
        monkeypatch.setenv(variable, value)
    with override_settings(STORAGES={**settings.STORAGES, "default": s3_storage(name)}):
        made = scenario.exercise(client, listing, django_capture_on_commit_callbacks)
        scenario.missing_original(client, lambda key: s3.delete_object(Bucket=name, Key=key))
    # The twin, two files, three live batches and the set's two runs (the first trace
    # was deleted, the lost one's object removed).
    assert len(listing("originals/")) == 1 + 2 + 3 + 2
    assert any(key.startswith(f"originals/{made['live'][:2]}/") for key in listing(""))
    assert len(listing("sets/")) == 1


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as reply:
        return reply.read()


def _send(url: str, body: bytes = b"", method: str = "POST") -> dict:
    request = urllib.request.Request(
        url, data=body or None, method=method, headers={"Content-Type": "application/x-ndjson"}
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


@pytest.fixture
def database_url(tmp_path):
    """A database of the test's own for the processes: a fresh PostgreSQL database when
    DATABASE_URL names PostgreSQL (.ci/run's second pass), else an SQLite file."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp_path / 'shared.sqlite3'}"
        return
    import psycopg

    name = f"loop_inspector_s3_{uuid.uuid4().hex[:12]}"
    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _process_env(base: dict[str, str], data_dir: Path) -> dict[str, str]:
    data_dir.mkdir()
    return {**base, "INSPECTOR_DATA_DIR": str(data_dir)}


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_ingest_in_one_process_and_download_from_another(
    s3_endpoint, bucket, database_url, tmp_path
):
    name, listing, _ = bucket
    env = server_env(DATABASE_URL=database_url, REDIS_URL="", **s3_env(s3_endpoint, name))
    migrate(env)
    single = scenario.single_file(4)
    (tmp_path / "run.jsonl").write_bytes(single)
    parts = [ndjson(agent_lines(2)), scenario.single_file(3)]
    for number, part in enumerate(parts):
        (tmp_path / f"part{number}.jsonl").write_bytes(part)

    ingest_env = _process_env(env, tmp_path / "ingest-data")
    single_id = UUID.findall(_manage(ingest_env, "ingest", str(tmp_path / "run.jsonl")))[0]
    together = _manage(
        ingest_env, "ingest", "--together", str(tmp_path / "part0.jsonl"),
        str(tmp_path / "part1.jsonl"),
    )  # fmt: skip
    several_id = UUID.findall(together)[0]
    assert len(listing("originals/")) == 3

    web_env = _process_env(env, tmp_path / "web-data")
    with daphne(web_env, tmp_path / "daphne.log") as server:
        assert _get(f"{server}/traces/{single_id}/download") == single
        assert _get(f"{server}/traces/{several_id}/download?file=1") == parts[1]
        bundle = zipfile.ZipFile(io.BytesIO(_get(f"{server}/traces/{several_id}/download")))
        assert [bundle.read(n) for n in sorted(bundle.namelist())] == parts

        # A live trace the web process stores, re-analysed by another process.
        live = _send(f"{server}/api/traces?live=1&name=live")["id"]
        lines = scenario.single_file(3).splitlines(keepends=True)
        _send(f"{server}/api/traces/{live}/lines?offset=0", b"".join(lines[:5]))
        _send(f"{server}/api/traces/{live}/lines?offset=5", b"".join(lines[5:]))
        _send(f"{server}/api/traces/{live}/close")
        assert "re-analysed 1 trace(s)" in _manage(
            _process_env(env, tmp_path / "worker-data"), "reanalyze", live
        )
        assert _get(f"{server}/traces/{live}/download") == b"".join(lines)
        assert len(listing(f"originals/{live[:2]}/{live}/")) == 2

        for trace_id in (single_id, several_id, live):
            assert _send(f"{server}/api/traces/{trace_id}", method="DELETE")["deleted"]
    assert listing("originals/") == []
    for folder in ("ingest-data", "web-data", "worker-data"):
        assert [p for p in (tmp_path / folder).rglob("*") if p.is_file()] == [], folder
