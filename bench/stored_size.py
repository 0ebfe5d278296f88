"""Stored bytes of one long session, per table, against the original file (issue 25).

Issue 25 found 24.5 MiB stored for a 10.9 MiB original at 20,000 calls; the target is
at most 1x the original. bench/page.py prints the report column and its parts only;
this bench counts everything an upload leaves: every table's pages (its indexes
included, TOAST on PostgreSQL) and the original's objects in the data folder, each
measured as the difference between a freshly migrated database and the same database
after the upload, so rows the migrations write (prices, the default project) are not
counted. A second figure per table, "payload", sums the stored length of each row's
columns (what the rows hold, without page slack or indexes); tables no model names (the
search index's FTS5 tables on SQLite) have pages only.

The session is tests/core/long_session.py's Claude Code session (each message once, so
its file is linear in its calls), uploaded through `trace_upload` as the page would.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/stored_size.py [--calls 20000]
        [--database postgres://postgres@127.0.0.1:5432/NAME]

With `--database` the named PostgreSQL database is dropped and created again (give it a
name of its own); without it a fresh SQLite file is used.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup(folder: Path, database: str) -> None:
    """Django on a fresh database (SQLite in `folder`, or the PostgreSQL one made anew)
    with its data folder in `folder`."""
    if database:
        import psycopg

        base, _, name = database.rpartition("/")
        with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = database
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/stored.sqlite3"
    os.environ.pop("REDIS_URL", None)
    os.environ["INSPECTOR_DATA_DIR"] = str(folder / "data")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def table_bytes() -> dict[str, int]:
    """Each of our tables' bytes on disk, its indexes (and TOAST) included."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT relname, pg_total_relation_size(oid) FROM pg_class "
                "WHERE relkind = 'r' AND relname LIKE 'traces\\_%%'"
            )
            return {name: int(size) for name, size in cursor.fetchall()}
        cursor.execute(
            "SELECT m.tbl_name, SUM(d.pgsize) FROM dbstat AS d "
            "JOIN sqlite_master AS m ON m.name = d.name GROUP BY m.tbl_name"
        )
        return {name: int(size) for name, size in cursor.fetchall() if name.startswith("traces_")}


def payload_bytes() -> dict[str, int]:
    """Each of our tables' rows, the stored length of every column summed."""
    from django.apps import apps
    from django.db import connection

    sizes: dict[str, int] = {}
    with connection.cursor() as cursor:
        for model in apps.get_app_config("traces").get_models():
            table = model._meta.db_table
            columns = [f.column for f in model._meta.concrete_fields]
            if connection.vendor == "postgresql":
                each = " + ".join(f'COALESCE(pg_column_size("{c}"), 0)' for c in columns)
            else:
                each = " + ".join(f'COALESCE(LENGTH(CAST("{c}" AS BLOB)), 0)' for c in columns)
            cursor.execute(f'SELECT COALESCE(SUM({each}), 0) FROM "{table}"')
            sizes[table] = int(cursor.fetchone()[0])
    return sizes


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--database", default="", help="a PostgreSQL URL (recreated)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        setup(folder, args.database)
        from django.db import connection

        from tests.core.long_session import make_session
        from traces.services.upload import trace_upload

        data = make_session(args.calls)
        tables_before, payload_before = table_bytes(), payload_bytes()
        files_before = folder_bytes(folder / "data")
        trace = trace_upload(files=[("session.jsonl", data)], name="stored size").trace
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        tables, payload = table_bytes(), payload_bytes()
        originals = folder_bytes(folder / "data") - files_before
        vendor = connection.vendor
        calls = trace.calls_count
    original = len(data)
    mib = 1024 * 1024
    rows = sorted(
        (
            (
                table,
                tables[table] - tables_before.get(table, 0),
                payload.get(table, 0) - payload_before.get(table, 0),
            )
            for table in tables
        ),
        key=lambda row: -row[1],
    )
    print(
        f"{calls:,} calls (tests/core/long_session.py), original {original / mib:.2f} MiB; "
        f"{vendor}; bytes the upload added"
    )
    print(f"{'table':32}{'on disk':>12}{'x orig':>8}{'payload':>12}{'x orig':>8}")
    for table, disk, held in rows:
        if disk or held:
            print(
                f"{table:32}{disk / mib:9.2f} MiB{disk / original:8.3f}"
                f"{held / mib:9.2f} MiB{held / original:8.3f}"
            )
    print(
        f"{'original (data folder)':32}{originals / mib:9.2f} MiB{originals / original:8.3f}"
        f"{originals / mib:9.2f} MiB{originals / original:8.3f}"
    )
    disk_total = sum(disk for _, disk, _ in rows) + originals
    held_total = sum(held for _, _, held in rows) + originals
    print(
        f"{'total':32}{disk_total / mib:9.2f} MiB{disk_total / original:8.3f}"
        f"{held_total / mib:9.2f} MiB{held_total / original:8.3f}"
    )
    print("target (issue 25): total at most 1x the original")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
