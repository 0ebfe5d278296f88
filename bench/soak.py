"""Soak: many mixed requests against one daphne; its open files and memory must stay flat.

Starts one daphne on a fresh SQLite file (or on DATABASE_URL when it names PostgreSQL),
uploads --traces small distinct traces through the API, then sends --requests mixed
requests in bursts of --clients concurrent clients: the list page, distinct trace pages
(each a report-cache miss when the trace is new to the process), call pages, diagram
JSON, the API's report, the rules page and 404s. Before, during (every tenth of the run)
and after, it prints the server process's open file descriptors (and how many are the
SQLite database), its RSS, and the requests answered 5xx.

Issue 26 found ~1 open SQLite connection left per distinct trace page (9,991 after
~40,000 requests, then "unable to open database file"); flat is the target.

    .venv/bin/python bench/soak.py [--requests 50000] [--clients 20] [--traces 300]

Bytecode is cached in a folder of the run (PYTHONPYCACHEPREFIX), as a user's machine
caches it: these machines set PYTHONDONTWRITEBYTECODE=1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.live.servers import daphne, migrate, process_figures, server_env, server_pid  # noqa: E402
from traces.core.reading.sample import sample_bytes  # noqa: E402


async def upload_traces(client: httpx.AsyncClient, base: str, count: int) -> list[str]:
    data = sample_bytes()
    ids = []
    for n in range(count):
        answer = await client.post(
            f"{base}/api/traces", files={"file": (f"soak-{n}.jsonl", data)}, timeout=60
        )
        answer.raise_for_status()
        ids.append(answer.json()["id"])
    return ids


def request_mix(base: str, ids: list[str], rng: random.Random) -> str:
    """One request of the mix: mostly pages of traces, new ones first."""
    trace = rng.choice(ids)
    roll = rng.random()
    if roll < 0.45:
        return f"{base}/traces/{trace}/"
    if roll < 0.60:
        return f"{base}/traces/{trace}/calls/{rng.randint(0, 5)}/"
    if roll < 0.70:
        return f"{base}/traces/{trace}/diagram.json"
    if roll < 0.80:
        return f"{base}/api/traces/{trace}"
    if roll < 0.88:
        return f"{base}/"
    if roll < 0.94:
        return f"{base}/rules/"
    return f"{base}/traces/00000000-0000-0000-0000-{rng.randint(0, 10**12):012d}/"


async def soak(base: str, pid: int, database: str, args: argparse.Namespace) -> None:
    rng = random.Random(26)
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        ids = await upload_traces(client, base, args.traces)
        statuses: dict[int, int] = {}
        errors = 0

        def report(label: str, done: int, started: float) -> None:
            fds, sqlite, rss = process_figures(pid, database)
            rate = done / max(time.perf_counter() - started, 1e-9)
            server_errors = sum(n for status, n in statuses.items() if status >= 500)
            print(
                f"{label:>8s} {done:7d} requests  fds {fds:5d}  sqlite fds {sqlite:5d}  "
                f"RSS {rss:7.1f} MiB  5xx {server_errors:4d}  failed {errors:3d}  "
                f"{rate:6.0f} req/s",
                flush=True,
            )

        async def one(url: str) -> None:
            nonlocal errors
            try:
                answer = await client.get(url)
                statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
            except httpx.HTTPError:
                errors += 1

        started = time.perf_counter()
        report("start", 0, started)
        done = 0
        step = max(args.requests // 10, args.clients)
        next_report = step
        while done < args.requests:
            burst = min(args.clients, args.requests - done)
            await asyncio.gather(*(one(request_mix(base, ids, rng)) for _ in range(burst)))
            done += burst
            if done >= next_report:
                report("", done, started)
                next_report += step
        await asyncio.sleep(1)
        report("end", done, started)
        print("statuses:", dict(sorted(statuses.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--traces", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="soak-") as folder:
        os.environ.setdefault("PYTHONPYCACHEPREFIX", str(ROOT / ".bench-pycache"))
        database_url = os.environ.get("DATABASE_URL", "")
        database = ""
        if not database_url.startswith("postgres"):
            database = str(Path(folder) / "soak.sqlite3")
            database_url = f"sqlite:///{database}"
        env = server_env(DATABASE_URL=database_url, REDIS_URL=os.environ.get("REDIS_URL", ""))
        migrate(env)
        engine = "PostgreSQL" if database_url.startswith("postgres") else "SQLite"
        print(f"soak: one daphne on {engine}, {args.traces} traces, {args.requests} requests "
              f"in bursts of {args.clients}")  # fmt: skip
        with daphne(env, Path(folder) / "daphne.log") as base:
            asyncio.run(soak(base, server_pid(base), database, args))


if __name__ == "__main__":
    main()
