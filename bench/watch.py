"""`watch`'s first pass over a fake home of 2,000 session files, and an append's latency.

Builds a home from the shared corpus (../shared/corpus and ../shared/agents) copied many
times into a temporary folder, on a fresh SQLite database, and runs one `watch_pass`:
files/s and MB/s of the first pass, against a baseline measured in the same run (reading
the same files' bytes), then the pass that follows (nothing new: the cost of a watcher
that is idle), and the "On this machine" page's server time over that home, against the
bare listing of its folders it does on each request. Then a growing session: one line
appended, one pass, until the append is stored, as p50/p95 over `--appends` (the viewer
socket's own hop is `bench/live.py`'s; the whole hop, a real daphne and `manage.py
watch` to a websocket viewer, is `bench/watch_viewer.py`'s).

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/watch.py [--files 2000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "pycache"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--appends", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{Path(folder) / 'bench.sqlite3'}"
        os.environ["INSPECTOR_DATA_DIR"] = str(Path(folder) / "data")
        os.environ.pop("REDIS_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from tests.watch.fakehome import build_home
        from traces.core.discovery import find_sessions, session_files
        from traces.live.watch import watch_pass

        corpus, agents = ROOT.parent / "shared/corpus", ROOT.parent / "shared/agents"
        one = len(build_home(Path(folder) / "probe", corpus, agents).sessions)
        copies = -(-args.files // one)
        home = build_home(Path(folder) / "home", corpus, agents, copies=copies).home
        found = list(find_sessions(home, {}))
        total = sum(c.size for c in found)
        started = time.perf_counter()
        for candidate in found:
            session_files(candidate)
        baseline = time.perf_counter() - started
        started = time.perf_counter()
        report = watch_pass(home=home, env={})
        first = time.perf_counter() - started
        started = time.perf_counter()
        idle = watch_pass(home=home, env={})
        second = time.perf_counter() - started
        mb = total / 1e6
        print(
            f"{len(found)} sessions, {mb:.1f} MB, {report.imported} imported, "
            f"{len(report.problems)} problems"
        )
        print(f"read the bytes (baseline): {baseline:.2f} s  {len(found) / baseline:,.0f} files/s")
        print(
            f"first pass:  {first:.1f} s  {len(found) / first:,.1f} files/s  "
            f"{mb / first:.2f} MB/s  ({first / baseline:,.0f}x the baseline)"
        )
        print(f"next pass (nothing new): {second:.2f} s  {idle.unchanged} unchanged")

        from django.test import Client

        from traces.core.discovery import scan

        os.environ["HOME"] = str(home)  # the page looks under this process's home
        client = Client(HTTP_HOST="127.0.0.1")
        assert client.get("/machine/").status_code == 200
        listing, page = [], []
        for _ in range(5):
            started = time.perf_counter()
            scan(home, {}, absent=True)
            listing.append(time.perf_counter() - started)
            started = time.perf_counter()
            client.get("/machine/")
            page.append(time.perf_counter() - started)
        listed, served = statistics.median(listing), statistics.median(page)
        print(
            f"machine page: {served * 1000:.0f} ms over {len(found)} sessions "
            f"(listing the folders alone {listed * 1000:.0f} ms: {served / listed:.2f}x)"
        )

        source = (corpus / "claude_code_jsonl/spotter/tool_heavy.jsonl").read_bytes()
        lines = source.splitlines(keepends=True)
        grow = Path(folder) / "grow"
        session = grow / ".claude/projects/-bench/growing.jsonl"
        session.parent.mkdir(parents=True)
        session.write_bytes(b"".join(lines[:2]))
        watch_pass(home=grow, env={})
        latencies = append_latencies(session, (lines[2:] * 10)[: args.appends])
        p95 = latencies[int(len(latencies) * 0.95) - 1]
        print(
            "append -> stored and broadcast, followed as `watch` follows between passes "
            f"(every {follow_seconds():.1f} s): p50 {statistics.median(latencies) * 1000:.0f} ms "
            f"p95 {p95 * 1000:.0f} ms over {len(latencies)} appends (target: an open page "
            "in < 1 s p95; the socket hop to the page is bench/live.py's, a few ms)"
        )


def follow_seconds() -> float:
    from traces.conf import inspector_settings

    return float(inspector_settings()["WATCH_FOLLOW_SECONDS"])


def append_latencies(session: Path, lines: list[bytes]) -> list[float]:
    """Each line appended to the live session, timed until the watcher's follow loop
    (running in its own thread, as in `manage.py watch`) has stored and broadcast it."""
    import threading

    from traces import models
    from traces.live.watch import follow_until

    stop = threading.Event()
    follower = threading.Thread(
        target=follow_until,
        args=(time.monotonic() + 3600,),
        kwargs={"wait": stop.wait},
        daemon=True,
    )
    follower.start()
    row = models.WatchedSession.objects.get(path=str(session))
    sent, latencies = row.lines_sent, []
    try:
        for line in lines:
            time.sleep(0.05)  # lines come apart, as an agent writes them
            started = time.perf_counter()
            with open(session, "ab") as handle:
                handle.write(line)
            while models.WatchedSession.objects.get(pk=row.pk).lines_sent == sent:
                time.sleep(0.002)
            latencies.append(time.perf_counter() - started)
            sent += 1
    finally:
        stop.set()
        follower.join(10)
    return sorted(latencies)


if __name__ == "__main__":
    main()
