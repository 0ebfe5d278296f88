"""Server time of the trace list at 10,000 stored traces, filtered, sorted and paged, on
SQLite and on PostgreSQL.

Rows are created directly (bulk inserts of the summary columns, findings per rule,
labels and run sets, each with a small stored report) rather than by ingesting 10,000
files; the list reads only the summary columns, which is what is measured. Every page
is fetched through Django's test client (URL routing, query, template), as a ratio to
the rules page measured in the same run. Target (issue "Post-mortems across hundreds of
runs"): under 200 ms of server time for a filtered list on both databases.

    .venv/bin/python bench/list.py [--rows 10000] [--repeat 5]
        [--postgres postgres://postgres@127.0.0.1:5432/i16]   (empty string: skip)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RULES = [
    ("dangling-tool-call", "error"),
    ("api-error", "error"),
    ("oversized-tool-result", "warning"),
    ("serial-independent-calls", "info"),
    ("slow-tool", "info"),
    ("retry-loop", "warning"),
]
OUTCOMES = ["finished"] * 6 + ["api_error", "halted_on_tool_use", "max_tokens", "interrupted"]
MODELS = ["claude-sonnet-4-5", "claude-opus-4-1", "gpt-4.1", "gpt-5-mini", "o3"]
TOOLS = ["read_file", "grep", "bash", "edit_file", "web_search", "find_free_slots"]
FORMATS = ["anthropic-messages", "claude-code", "inspect-ai", "openai-chat", "codex-rollout"]
LABELS = ["baseline", "prompt-v2", "nightly", "regression", "flaky"]


def median_time(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def populate(rows: int) -> dict:
    """`rows` traces in 20 run sets with summary columns, rule rows and labels."""
    import datetime as dt

    from django.db import transaction
    from django.utils import timezone

    from traces import models

    rng = random.Random(16)
    report = {"schema": "loop-inspector/report/v1", "calls": [{"index": 1}] * 40, "pad": "x" * 2000}
    with transaction.atomic():
        sets = models.RunSet.objects.bulk_create(
            models.RunSet(name=f"eval night {n:02d}") for n in range(20)
        )
        labels = models.Label.objects.bulk_create(models.Label(name=name) for name in LABELS)
        traces = []
        fired = []
        now = timezone.now()
        for n in range(rows):
            fired.append(rng.sample(RULES, rng.choice([0, 0, 1, 1, 2, 3])))
            calls = rng.randint(1, 120)
            tools = rng.sample(TOOLS, rng.randint(1, 4))
            traces.append(
                models.Trace(
                    name=f"task-{n:05d} {rng.choice(['refactor', 'bugfix', 'search', 'book'])}",
                    format=rng.choice(FORMATS),
                    calls_count=calls,
                    tool_runs_count=calls * 2,
                    input_tokens=calls * rng.randint(800, 9000),
                    output_tokens=calls * rng.randint(50, 400),
                    outcome_kind=rng.choice(OUTCOMES),
                    cost_usd=round(calls * rng.uniform(0.001, 0.05), 6),
                    model=rng.choice(MODELS),
                    tool_names=" ".join(sorted(tools)),
                    error_results=rng.choice([0, 0, 0, 1, 3]),
                    run_set=sets[n % len(sets)],
                    flags_count=len(fired[-1]),
                    report=report,
                )
            )
        models.Trace.objects.bulk_create(traces, batch_size=1000)
        for n, trace in enumerate(traces):
            trace.created_at = now - dt.timedelta(minutes=7 * n)
        models.Trace.objects.bulk_update(traces, ["created_at"], batch_size=1000)
        rule_rows = []
        for trace, rules in zip(traces, fired, strict=True):
            rule_rows += [
                models.TraceRule(trace=trace, rule=rule, severity=severity, count=1)
                for rule, severity in rules
            ]
        models.TraceRule.objects.bulk_create(rule_rows, batch_size=2000)
        through = models.Trace.labels.through
        through.objects.bulk_create(
            (through(trace_id=t.pk, label_id=rng.choice(labels).pk) for t in traces[::2]),
            batch_size=2000,
        )
    return {"set": sets[3].pk, "rules": len(rule_rows)}


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

    call_command("migrate", verbosity=0)
    if connection.vendor == "postgresql":
        call_command("flush", verbosity=0, interactive=False)
    started = time.perf_counter()
    made = populate(rows)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    populate_s = time.perf_counter() - started
    client = Client(HTTP_HOST="127.0.0.1")

    def get(path: str) -> int:
        reply = client.get(path)
        assert reply.status_code == 200, (path, reply.status_code)
        return len(reply.content)

    views = [
        ("all, newest first", "/"),
        ("rule + outcome", "/?rule=dangling-tool-call&outcome=api_error"),
        ("search a tool name, by cost", "/?q=web_search&sort=-cost"),
        (
            "model + calls ≥ 50, by findings, p5",
            "/?model=gpt-4.1&calls_min=50&sort=-findings&page=5",
        ),
        ("label + cost range + errors", "/?label=nightly&cost_min=0.5&cost_max=2&errors=1"),
        ("rule + severity, by calls", "/?rule=oversized-tool-result&severity=warning&sort=calls"),
        ("one run set, last page", f"/?set={made['set']}&page=99"),
        ("last page of everything", "/?page=999"),
    ]
    for _, path in views:
        get(path)  # warm caches and templates once
    base = median_time(lambda: get("/rules/"), repeat)
    print(
        f"{connection.vendor}: {rows:,} traces, {made['rules']:,} rule rows, populated in "
        f"{populate_s:.1f} s"
    )
    print(f"  baseline: rules page                  {base * 1000:7.1f} ms")
    worst = 0.0
    for label, path in views:
        seconds = median_time(lambda path=path: get(path), repeat)
        worst = max(worst, seconds)
        print(f"  {label:38s} {seconds * 1000:7.1f} ms  ({seconds / base:4.1f}x baseline)")
    set_page = median_time(lambda: get(f"/sets/{made['set']}/"), repeat)
    print(f"  run set page ({rows // 20:,} runs)              {set_page * 1000:7.1f} ms")
    print(f"  slowest list view: {worst * 1000:.1f} ms (target: under 200 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/i16")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, args.repeat)
        return
    with tempfile.TemporaryDirectory() as folder:
        backends = [f"sqlite:///{folder}/list.sqlite3"]
        if args.postgres:
            backends.append(args.postgres)
        for url in backends:
            command = [sys.executable, __file__, "--child", url]
            command += ["--rows", str(args.rows), "--repeat", str(args.repeat)]
            result = subprocess.run(command, check=False)
            if result.returncode:
                print(f"  ({url.split(':')[0]} run failed: exit {result.returncode})")


if __name__ == "__main__":
    main()
