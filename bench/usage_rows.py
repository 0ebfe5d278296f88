"""Server time of usage over time (`/usage/` and the `usage` command's summary) at 10,000
stored traces, on SQLite and on PostgreSQL.

Rows are created directly (the Trace rows and their usage rows: a few (hour, model)
slots, findings per rule and what-if savings each, spread over 90 days) rather than by
ingesting 10,000 files: the usage summary reads only these rows, which is what is
measured. The page goes through Django's test client (routing, query, template), as a
ratio to the rules page measured in the same run. Target (issue 27): under 300 ms.

    .venv/bin/python bench/usage_rows.py [--rows 10000] [--repeat 5]
        [--postgres postgres://postgres@127.0.0.1:5432/wt_usage_bench]   (empty: skip)
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODELS = ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5", "gpt-5", "gpt-5-mini"]
AGENTS = ["claude-code", "codex", "gemini-cli", "cline", ""]
RULES = ["oversized-tool-result", "cache-expired", "serial-independent-calls", "slow-tool",
         "repeated-tool-call", "results-out-of-order"]  # fmt: skip
LEVERS = ["cap Read at 800 tokens", "cap Bash at 800 tokens", "cap Grep at 800 tokens",
          "clear tool results older than 3 requests (replace them with a short placeholder)",
          "drop the tool definitions never called"]  # fmt: skip
DAYS = 90


def median_time(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def populate(rows: int) -> int:
    from traces import models

    rng = random.Random(27)
    project = models.Project.default()
    now = int(time.time()) // 3600 * 3600
    traces, slots, findings, savings = [], [], [], []
    for n in range(rows):
        start = now - rng.randrange(DAYS * 24) * 3600
        trace = models.Trace(id=uuid.UUID(int=rng.getrandbits(128)), project=project,
                             name=f"session {n}", format="claude-code",
                             agent=rng.choice(AGENTS), working_dir=f"/home/dev/p{n % 40}",
                             started_at=float(start))  # fmt: skip
        traces.append(trace)
        for hour in range(rng.randint(1, 4)):
            for model in rng.sample(MODELS, rng.choice((1, 1, 2))):
                parts = [rng.random() for _ in range(8)]
                slots.append(models.UsageSlot(
                    trace=trace, hour=start + hour * 3600, model=model,
                    calls=rng.randint(1, 60), priced_calls=rng.randint(0, 60),
                    input_tokens=rng.randint(0, 50_000), output_tokens=rng.randint(0, 80_000),
                    cache_read_tokens=rng.randint(0, 5_000_000),
                    cache_write_tokens=rng.randint(0, 1_000_000), cost_usd=sum(parts[:4]),
                    uncached_input_usd=parts[0], cache_read_usd=parts[1],
                    cache_write_usd=parts[2], output_usd=parts[3], prefix_usd=parts[4],
                    tool_results_usd=parts[5], replayed_output_usd=parts[6], other_usd=parts[7],
                ))  # fmt: skip
        for rule in rng.sample(RULES, 2):
            findings.append(models.UsageFinding(trace=trace, hour=start, rule=rule,
                                                count=rng.randint(1, 20),
                                                cost_usd=rng.random()))  # fmt: skip
        for lever in rng.sample(LEVERS, 3):
            savings.append(models.UsageSaving(trace=trace, hour=start, lever=lever,
                                              scenario="cap-results", usd_saved=rng.random(),
                                              tokens_saved=rng.randint(0, 90_000)))  # fmt: skip
    models.Trace.objects.bulk_create(traces, batch_size=2000)
    models.UsageSlot.objects.bulk_create(slots, batch_size=5000)
    models.UsageFinding.objects.bulk_create(findings, batch_size=5000)
    models.UsageSaving.objects.bulk_create(savings, batch_size=5000)
    return len(slots)


def child(url: str, rows: int, repeat: int) -> None:
    """One backend in its own process (Django binds its database at setup)."""
    os.environ["DATABASE_URL"] = url
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
    import django
    from django.core.management import call_command

    django.setup()
    from django.db import connection
    from django.test import Client

    from traces.core.outputs.usage_periods import zone
    from traces.selectors.usage import UsageQuery, usage_summary

    call_command("migrate", verbosity=0)
    if connection.vendor == "postgresql":
        call_command("flush", verbosity=0, interactive=False)
    started = time.perf_counter()
    slots = populate(rows)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    populate_s = time.perf_counter() - started
    client = Client(HTTP_HOST="127.0.0.1")

    def get(path: str) -> None:
        reply = client.get(path)
        assert reply.status_code == 200, (path, reply.status_code)

    utc, paris = zone("UTC"), zone("Europe/Paris")
    week_ago = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=7)
    summaries = [
        ("summary: daily, everything", UsageQuery(period="daily", tz=utc)),
        ("summary: daily by model, --breakdown", UsageQuery(tz=utc, breakdown=True)),
        ("summary: monthly, one agent", UsageQuery(period="monthly", tz=utc, agent="codex")),
        ("summary: weekly, one model", UsageQuery(period="weekly", tz=utc, model="gpt-5")),
        ("summary: daily, last 7 days", UsageQuery(tz=utc, since=week_ago)),
        ("summary: one project, Paris time", UsageQuery(tz=paris, project="/home/dev/p7")),
    ]
    pages = [
        ("page: /usage/ (days, everything)", "/usage/?tz=UTC"),
        ("page: /usage/ weekly, one model", "/usage/?period=weekly&model=gpt-5&tz=UTC"),
    ]
    for _, path in pages:
        get(path)
    for _, query in summaries:
        usage_summary(query=query)
    base = median_time(lambda: get("/rules/"), repeat)
    print(f"{connection.vendor}: {rows:,} traces, {slots:,} usage slots, populated in "
          f"{populate_s:.1f} s")  # fmt: skip
    print(f"  baseline: rules page                     {base * 1000:7.1f} ms")
    worst = 0.0
    for label, query in summaries:
        seconds = median_time(lambda query=query: usage_summary(query=query), repeat)
        worst = max(worst, seconds)
        print(f"  {label:40s} {seconds * 1000:7.1f} ms  ({seconds / base:4.1f}x baseline)")
    for label, path in pages:
        seconds = median_time(lambda path=path: get(path), repeat)
        worst = max(worst, seconds)
        print(f"  {label:40s} {seconds * 1000:7.1f} ms  ({seconds / base:4.1f}x baseline)")
    print(f"  slowest: {worst * 1000:.1f} ms (target: under 300 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/wt_usage_bench")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, args.repeat)
        return
    with tempfile.TemporaryDirectory() as folder:
        backends = [f"sqlite:///{folder}/usage.sqlite3"]
        if args.postgres:
            backends.append(args.postgres)
        for url in backends:
            command = [sys.executable, __file__, "--child", url]
            command += ["--rows", str(args.rows), "--repeat", str(args.repeat)]
            # Bytecode of the run stays out of the checkout and the shared venv.
            env = {**os.environ, "PYTHONPYCACHEPREFIX": str(Path(folder) / "pycache")}
            result = subprocess.run(command, check=False, env=env)
            if result.returncode:
                print(f"  ({url.split(':')[0]} run failed: exit {result.returncode})")


if __name__ == "__main__":
    main()
