"""The floor of a 20,000-call ingest, and our ingest as a ratio to it (issue 25: <= 3).

One Claude Code session of --calls calls (tests/core/long_session.py: each message once,
every call reporting its usage, errors, parallel pairs, repeats and long results among
them) is

- parsed bare: `orjson.loads` of every line (the floor of reading it),
- inserted bare: the very rows our ingest stored (every table the upload wrote, read
  back afterwards), INSERTed with `executemany` in one transaction into an empty SQLite
  database of the same schema (the floor of storing it),
- ingested by us: `trace_upload` on SQLite (parse, rebuild, account, lint, store),

each timed in the same run (median of --repeat), and the report's own parts apart:
accounting and each lint rule on the rebuilt trace, so a slow rule shows by name. Peak
Python memory of one ingest is printed against the file size.

Each ingest that is timed runs in a child process of its own (`--child`), so its peak
RSS is its own (`RUSAGE_CHILDREN` cannot tell two children apart: the child reads its
own `ru_maxrss` and /proc VmRSS) and the RSS before the ingest (imports, Django, the
file in memory, a small warm-up ingest) is printed beside it. `--before DIR` runs the
ingest of another source tree in the same run, interleaved with ours, on the same
file (e.g. `git worktree add /tmp/before-ingest main`, or `git archive main | tar -x`).

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/floor.py [--calls 20000]
        [--before /tmp/before-ingest]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import setup_django  # noqa: E402  (bench/ingest.py: SQLite in a temp folder)

from tests.core.long_session import make_session  # noqa: E402

TEMPLATE = "migrated.sqlite3"
"""The empty, migrated database each child starts from (next to the file it reads)."""

Timing = tuple[float, float]
"""(wall seconds, CPU seconds of this process): on a shared, loaded machine the CPU time
says what the work costs when the wall time also counts waiting for a core."""


def _clock() -> Timing:
    return time.perf_counter(), time.process_time()


def _since(started: Timing) -> Timing:
    wall, cpu = _clock()
    return wall - started[0], cpu - started[1]


def bare_parse(data: bytes) -> Timing:
    started = _clock()
    for line in data.splitlines():
        orjson.loads(line)
    return _since(started)


def stored_rows(db_path: str) -> dict[str, tuple[str, list[tuple]]]:
    """Every non-empty application table: its CREATE statement and its rows (full-text
    search tables left out: their rows are an index SQLite derives, not ours to insert)."""
    source = sqlite3.connect(db_path)
    tables = {}
    for name, sql in source.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'traces_%'"
    ):
        if "_fts" in name or sql.upper().startswith("CREATE VIRTUAL"):
            continue
        rows = source.execute(f'SELECT * FROM "{name}"').fetchall()
        if rows:
            tables[name] = (sql, rows)
    source.close()
    return tables


def bare_insert(tables: dict[str, tuple[str, list[tuple]]], folder: Path, run: int) -> Timing:
    """INSERT the rows into a fresh database of the same tables: one transaction."""
    target = sqlite3.connect(folder / f"floor-{run}.sqlite3")
    for sql, _ in tables.values():
        target.execute(sql)
    target.commit()
    started = _clock()
    with target:
        for name, (_, rows) in tables.items():
            marks = ", ".join("?" * len(rows[0]))
            target.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
    spent = _since(started)
    target.close()
    return spent


def ingest(data: bytes) -> Timing:
    from traces.services.upload import trace_upload

    started = _clock()
    trace_upload(files=[("floor.jsonl", data)], name="floor")
    return _since(started)


def _rss_mib(field: str = "VmRSS") -> float:
    """This process's resident memory now (VmRSS) or at its peak (VmHWM), from /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def child(root: Path, data_path: Path, folder: Path) -> None:
    """One measured ingest of `root`'s code, in this (fresh) process: prints JSON with its
    wall and CPU seconds, the RSS before it and the peak RSS of the process.

    The database is a copy of one the parent migrated: running the migrations costs a
    process ~95 MiB of migration states that a server's ingest never holds."""
    sys.path[:0] = [str(root)]
    for name in [m for m in sys.modules if m.split(".")[0] in ("traces", "inspector")]:
        del sys.modules[name]
    db_path = folder / "child.sqlite3"
    shutil.copyfile(data_path.parent / TEMPLATE, db_path)
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ["INSPECTOR_DATA_DIR"] = str(folder / "data")  # originals
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
    import django

    django.setup()
    from traces.services.upload import trace_upload

    if not Path(sys.modules["traces"].__file__ or "").is_relative_to(root):
        raise SystemExit(f"traces was not imported from {root}")
    trace_upload(files=[("warm.jsonl", make_session(50))], name="warm")  # imports, caches
    data = data_path.read_bytes()
    gc.collect()
    before = _rss_mib()
    started = _clock()
    trace_upload(files=[("floor.jsonl", data)], name="floor")
    wall, cpu = _since(started)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"wall": wall, "cpu": cpu, "rss_before": before, "rss_peak": peak}))


@dataclass(frozen=True)
class Measured:
    timing: Timing
    rss_before: float
    rss_peak: float


def ingest_in_child(root: Path, data_path: Path, folder: Path) -> Measured:
    """`child` in a new interpreter (the same one, the same cache folder)."""
    folder.mkdir()
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(root), str(data_path), str(folder)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return Measured((result["wall"], result["cpu"]), result["rss_before"], result["rss_peak"])


def median(timings: list[Timing]) -> Timing:
    return (
        statistics.median(t[0] for t in timings),
        statistics.median(t[1] for t in timings),
    )


def report_parts(data: bytes) -> list[tuple[str, float]]:
    """CPU seconds of accounting and of each rule on the rebuilt trace (cycle collection off,
    as `build_report` runs them)."""
    from traces.core.analysis.accounting import account
    from traces.core.analysis.ingest import analyze_bytes
    from traces.core.analysis.rules.base import LintContext
    from traces.core.analysis.rules.registry import rules

    trace = analyze_bytes(data)
    gc.disable()
    try:
        started = time.process_time()
        accounting = account(trace)
        parts = [("token accounting", time.process_time() - started)]
        ctx = LintContext(trace, accounting)
        for rule_class in rules():
            started = time.process_time()
            list(rule_class().check(ctx))
            parts.append((rule_class.id, time.process_time() - started))
    finally:
        gc.enable()
    return parts


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--before", type=Path, help="another source tree whose ingest runs in the same run"
    )
    args = parser.parse_args()

    data = make_session(args.calls)
    mib = 1024 * 1024
    trees = {"ours": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    measured: dict[str, list[Measured]] = {label: [] for label in trees}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data_path = folder / "floor.jsonl"
        data_path.write_bytes(data)
        db_path = str(folder / "bench.sqlite3")
        setup_django(db_path)
        from django.db import connection

        connection.close()  # all written to the file (a WAL checkpointed) before the copy
        shutil.copyfile(db_path, folder / TEMPLATE)
        ingest(data)  # the rows a bare INSERT stores
        connection.close()
        tables = stored_rows(db_path)
        rows = sum(len(r) for _, r in tables.values())
        parse_times, insert_times = [], []
        for run in range(args.repeat):  # interleaved: load bursts fall on all of them
            parse_times.append(bare_parse(data))
            insert_times.append(bare_insert(tables, folder, run))
            for label, root in trees.items():
                measured[label].append(ingest_in_child(root, data_path, folder / f"{label}-{run}"))
        parts = report_parts(data)
        tracemalloc.start()
        ingest(data)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

    parse, insert = median(parse_times), median(insert_times)
    floor = (parse[0] + insert[0], parse[1] + insert[1])

    def show(label: str, timing: Timing) -> None:
        print(f"{label:<36} {timing[0] * 1000:9.1f} ms wall {timing[1] * 1000:9.1f} ms CPU")

    print(f"file: {args.calls:,} calls in one loop, {len(data) / mib:.1f} MiB")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    show("bare orjson.loads of every line", parse)
    show(f"bare INSERT of {rows:,} rows ({len(tables)} tables)", insert)
    show("floor (parse + insert)", floor)
    for label, results in measured.items():
        ours = median([m.timing for m in results])
        before = statistics.median(m.rss_before for m in results)
        top = statistics.median(m.rss_peak for m in results)
        show(f"{label} ingest (SQLite, median of {args.repeat})", ours)
        print(
            f"  ratio {label} / floor: {ours[0] / floor[0]:.2f} wall, {ours[1] / floor[1]:.2f} CPU"
            "  (target <= 3)"
        )
        print(
            f"  RSS {label}: {before:.0f} MiB before the ingest, peak {top:.0f} MiB"
            f" (+{top - before:.0f} MiB; target peak <= 250)"
        )
    print(f"peak Python memory of an ingest: {peak / mib:.1f} MiB ({peak / len(data):.2f}x file)")
    total = sum(seconds for _, seconds in parts)
    print(f"accounting + lint (CPU): {total * 1000:.1f} ms = {total / floor[1]:.2f}x the floor")
    for name, seconds in sorted(parts, key=lambda p: -p[1])[:8]:
        print(f"  {name:<34} {seconds * 1000:8.1f} ms  {seconds / floor[1]:6.3f}x the floor")


if __name__ == "__main__":
    main()
