"""Server time of the trace list at 10,000 (or `--rows 50000`) stored traces, filtered,
sorted and paged, on SQLite and on PostgreSQL.

Rows are created directly (bulk inserts of the summary columns, findings per rule,
labels and run sets, each with a small stored report) rather than by ingesting 10,000
files; the list reads only the summary columns, which is what is measured. Every page
is fetched through Django's test client (URL routing, query, template), as a ratio to
the unfiltered first page measured in the same run (the baseline: the same template and
paging, no filter). One view per filter of the list, and the search box on names, tool
names, file names, ids and short text. Target (issue 25): under 100 ms of server time
for every list view at 50,000 traces on both databases.

Content search (issue 22): each trace also gets `--entries` calls' worth of indexed text
(`SearchEntry` rows of about 2 KB of Zipf-distributed words, inserted directly, the
database's own index built as it would be on ingest), and the list is searched for a
rare word, a word most traces hold, and two words together: the same target.

    .venv/bin/python bench/list.py [--rows 10000] [--repeat 5] [--entries 4]
        [--postgres postgres://postgres@127.0.0.1:5432/i16]   (empty string: skip)
        [--sqlite /tmp/list.sqlite3 --reuse]   (measure again what a run left there)
        [--baseline]   (each view also with the queries before issue 22 §3: ratios)
"""

from __future__ import annotations

import argparse
import itertools
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
AGENTS = ["", "claude-code", "codex", "gemini-cli"]
PROJECTS = ["/home/ana/shop", "/home/ana/billing", "/srv/agents/calendar", "/tmp/scratch"]


CPU: list[float] = []
"""This process's CPU seconds of each view's requests, the last `median_time` measured
(on SQLite the database's work too: it runs in this process). On a loaded machine the
wall time counts the waits for a core; the CPU time does not."""


def median_time(fn, repeat: int) -> float:
    samples = []
    CPU.clear()
    for _ in range(repeat):
        started, used = time.perf_counter(), time.process_time()
        fn()
        samples.append(time.perf_counter() - started)
        CPU.append(time.process_time() - used)
    return statistics.median(samples)


def cpu_ms() -> str:
    return f"cpu {statistics.median(CPU) * 1000:6.1f} ms"


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(size)]


def populate_content(traces: list, entries: int, rng: random.Random) -> int:
    """`entries` rows of call text per trace; "quetzal" is in 1 trace in 500, "common"
    in most, "invoice" and "overdue" in about 1 in 20 each."""
    from traces import models
    from traces.storage.row_writer import insert_rows

    words = vocabulary(rng)
    weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(words))))

    def body(n: int, call: int) -> str:
        text = rng.choices(words, cum_weights=weights, k=300)
        if call == 1:
            text.append("common")
        if n % 500 == 7 and call == entries:
            text.insert(150, "quetzal")
        if n % 20 == 3:
            text.insert(40, "invoice")
        if n % 17 == 3:
            text.insert(90, "overdue")
        return " ".join(text)

    rows = (
        (trace.pk, call, body(n, call))
        for n, trace in enumerate(traces)
        for call in range(1, entries + 1)
    )
    return insert_rows(models.SearchEntry, ["trace_id", "call_index", "body"], rows)


def populate(rows: int, entries: int = 0) -> dict:
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
                    source_filename=f"run-{n:05d}.jsonl",
                    agent=(agent := rng.choice(AGENTS)),
                    working_dir=rng.choice(PROJECTS) if agent else "",
                    state=models.Trace.State.LIVE if n % 1000 == 5 else models.Trace.State.COMPLETE,
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
        content_started = time.perf_counter()
        content_rows = populate_content(traces, entries, rng) if entries else 0
        content_s = time.perf_counter() - content_started
        through = models.Trace.labels.through
        through.objects.bulk_create(
            (through(trace_id=t.pk, label_id=rng.choice(labels).pk) for t in traces[::2]),
            batch_size=2000,
        )
    return {
        "set": sets[3].pk,
        "trace": traces[rows // 2].pk,
        "week": traces[rows // 2].created_at.date(),
        "rules": len(rule_rows),
        "entries": content_rows,
        "content_s": content_s,
    }


def stored(rows: int) -> dict | None:
    """What `populate` returns, read back from a database it filled with `rows` traces
    before (`--reuse`: 50,000 take minutes to insert), or None when it holds other rows."""
    from traces import models

    if models.Trace.objects.count() != rows:
        return None
    middle = models.Trace.objects.filter(name__startswith=f"task-{rows // 2:05d} ").first()
    if middle is None:
        return None
    return {
        "set": models.RunSet.objects.get(name="eval night 03").pk,
        "trace": middle.pk,
        "week": middle.created_at.date(),
        "rules": models.TraceRule.objects.count(),
        "entries": models.SearchEntry.objects.count(),
        "content_s": 0.0,
    }


def child(
    url: str, rows: int, repeat: int, entries: int, reuse: bool = False, compare: bool = False
) -> None:
    """One backend in its own process (Django binds its database at setup)."""
    import datetime as dt

    os.environ["DATABASE_URL"] = url
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
    import django
    from django.core.management import call_command

    django.setup()
    from django.db import connection
    from django.test import Client

    from bench.list_baseline import baseline

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    made = stored(rows) if reuse else None
    if made is None:
        if connection.vendor == "postgresql":
            call_command("flush", verbosity=0, interactive=False)
        made = populate(rows, entries)
        if connection.vendor == "postgresql":
            # What autovacuum does after so many inserts: without the visibility map
            # every index-only scan (the filter menus' DISTINCT values, counts) visits the
            # heap too, and each list view paid ~150 ms more at 50,000 traces.
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
    populate_s = time.perf_counter() - started
    client = Client(HTTP_HOST="127.0.0.1")

    def get(path: str) -> int:
        reply = client.get(path)
        assert reply.status_code == 200, (path, reply.status_code)
        return len(reply.content)

    week = made["week"]
    views = [
        ("rule + outcome", "/?rule=dangling-tool-call&outcome=api_error"),
        ("search a tool name, by cost", "/?q=web_search&sort=-cost"),
        ("search a name (1 trace)", "/?q=task-04999"),
        ("search a word of names, by calls", "/?q=bugfix&sort=calls"),
        ("search a file name (10 traces)", "/?q=run-0012"),
        ("search 2 letters (scanned)", "/?q=o3"),
        ("search a trace id", f"/?q={made['trace']}"),
        ("format + outcome", "/?format=claude-code&outcome=finished"),
        ("live traces", "/?outcome=live"),
        ("agent", "/?agent=codex"),
        ("project, grouped by agent", "/?project=/home/ana/billing&group=agent"),
        ("a week, by cost", f"/?from={week}&to={week + dt.timedelta(days=6)}&sort=-cost"),
        ("errors only", "/?errors=1"),
        ("run set by name", "/?set=eval+night+07"),
        (
            "model + calls ≥ 50, by findings, p5",
            "/?model=gpt-4.1&calls_min=50&sort=-findings&page=5",
        ),
        ("label + cost range + errors", "/?label=nightly&cost_min=0.5&cost_max=2&errors=1"),
        ("rule + severity, by calls", "/?rule=oversized-tool-result&severity=warning&sort=calls"),
        ("one run set, last page", f"/?set={made['set']}&page=99"),
        ("last page of everything", "/?page=999"),
        ("content: a rare word (20 traces)", "/?q=quetzal"),
        ("content: a word in every trace", "/?q=common"),
        ("content: two words, by cost", "/?q=invoice+overdue&sort=-cost"),
    ]
    for _, path in views:
        get(path)  # warm caches and templates once
    base = median_time(lambda: get("/"), repeat)
    base_cpu = statistics.median(CPU)
    print(
        f"{connection.vendor}: {rows:,} traces, {made['rules']:,} rule rows, populated in "
        f"{populate_s:.1f} s"
    )
    if made["entries"]:
        print(
            f"  content: {made['entries']:,} indexed calls, stored and indexed in "
            f"{made['content_s']:.1f} s"
        )
    print(f"  baseline: all, newest first, page 1   {base * 1000:7.1f} ms  {cpu_ms()}")
    if compare:
        print(f"  {'':38s} {'today':>10s} {'before':>10s}  before/today")
    worst = 0.0
    for label, path in views:
        seconds = median_time(lambda path=path: get(path), repeat)
        worst = max(worst, seconds)
        if not compare:
            print(
                f"  {label:38s} {seconds * 1000:7.1f} ms  ({seconds / base:4.1f}x baseline)  "
                f"{cpu_ms()} ({statistics.median(CPU) / base_cpu:4.1f}x)"
            )
            continue
        with baseline():
            before = median_time(lambda path=path: get(path), repeat)
        print(
            f"  {label:38s} {seconds * 1000:7.1f} ms {before * 1000:7.1f} ms  "
            f"{before / seconds:5.2f}x  ({seconds / base:4.1f}x baseline)"
        )
    set_page = median_time(lambda: get(f"/sets/{made['set']}/"), repeat)
    print(f"  run set page ({rows // 20:,} runs)              {set_page * 1000:7.1f} ms")
    print(
        f"  slowest list view: {worst * 1000:.1f} ms, {worst / base:.1f}x baseline "
        f"(target: under 100 ms at 50,000 traces; load average {os.getloadavg()[0]:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--entries", type=int, default=4, help="indexed calls per trace")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/i16")
    parser.add_argument(
        "--sqlite", default="", help="SQLite file to fill (default: a temporary one)"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="measure the rows a previous run left, if any"
    )
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="also time each view with the queries before issue 22 §3 (bench/list_baseline.py)",
    )
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.rows, args.repeat, args.entries, args.reuse, args.baseline)
        return
    with tempfile.TemporaryDirectory() as folder:
        backends = [f"sqlite:///{args.sqlite or Path(folder) / 'list.sqlite3'}"]
        if args.postgres:
            backends.append(args.postgres)
        for url in backends:
            command = [sys.executable, __file__, "--child", url]
            command += ["--rows", str(args.rows), "--repeat", str(args.repeat)]
            command += ["--entries", str(args.entries)] + (["--reuse"] if args.reuse else [])
            command += ["--baseline"] if args.baseline else []
            # Bytecode of the run stays out of the checkout and the shared venv.
            env = {**os.environ, "PYTHONPYCACHEPREFIX": str(Path(folder) / "pycache")}
            result = subprocess.run(command, check=False, env=env)
            if result.returncode:
                print(f"  ({url.split(':')[0]} run failed: exit {result.returncode})")


if __name__ == "__main__":
    main()
