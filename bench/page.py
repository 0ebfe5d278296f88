"""Server time of every page of a long trace (2,000 calls; 10,000 with --calls 10000).

The trace is a chat transcript (one JSON list of messages: the message-list format), so
2,000 calls take megabytes, not the gigabytes a request log re-sending its transcript
would. It goes through the real upload path, then the pages are fetched with Django's
test client (no network), as a ratio to the rules page measured in the same run; each
page cold (the first visit after the process's report cache is cleared: the stored report
decoded) and warm (later visits). Targets: the
trace page under 1 s of server time (issue "See the loop"); at 10,000 calls, the ingest
in at most 5 s and every page (trace page, last call, post-mortem, diagram.json, what-if
JSON, figures.json) under 1 s (issue 14); at 20,000 calls, every page under 150 ms warm
and 400 ms cold (issue 25). Server time is printed as wall time and as the process's CPU
time: on a shared machine the CPU time is the figure that does not depend on the others.

    .venv/bin/python bench/page.py [--calls 2000] [--repeat 5]
    .venv/bin/python bench/page.py --calls 10000 --repeat 3

With --sizes the trace page alone is measured at each size (issue 25: at most 500 KB of
HTML at 20,000 calls, every chart series at most 2,000 points): its HTML size, its
server time cold and warm, and the figures it fetches (figures.json, what-if.json) with
their size and their longest series, against the rules page; then the stored report's
bytes (packed column and window parts) against the original file and the report's JSON
(what the column held before 0029_report), and a window move's CPU time drawn from the
parts against the same moves drawn from the whole report (issue 24), and the trace page
cold and warm drawn from its page summary and parts against the same page drawn from the
whole report (its summary removed: the page as it was before 0032_summary), each as a
ratio to the rules page (issues 25/24: < 150 ms warm, < 400 ms cold); --session builds Claude
Code sessions reporting their usage (tests/core/long_session.py, bench/floor.py's).

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/page.py --sizes 100,10000,20000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def transcript(calls: int) -> bytes:
    tools = ["read_file", "grep", "bash", "edit_file"]
    messages: list[dict] = [
        {"role": "system", "content": "You are a coding agent. " * 40},
        {"role": "user", "content": "Fix the failing test in the payments module."},
    ]
    for n in range(calls):
        if n == calls - 1:
            messages.append({"role": "assistant", "content": "Done: the test passes."})
            break
        call_id = f"call_{n:05d}"
        name = tools[n % len(tools)]
        arguments = orjson.dumps({"path": f"src/module_{n % 50}.py", "n": n}).decode()
        messages.append(
            {
                "role": "assistant",
                "content": f"Step {n}: looking at module {n % 50}.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": f"line {n}: ok\n" * 20}
        )
    return orjson.dumps({"messages": messages}) + b"\n"


def median_time(fn, repeat: int) -> tuple[float, float]:
    """Median wall and median CPU seconds of `fn` over `repeat` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", help="comma-separated call counts: the trace page at each")
    parser.add_argument("--session", action="store_true", help="with --sizes: sessions")
    args = parser.parse_args()
    if args.sizes:
        sizes_main([int(n) for n in args.sizes.split(",")], args.repeat, args.session)
        return
    with tempfile.TemporaryDirectory() as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/page.sqlite3"
        os.environ.pop("REDIS_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        from django.test import Client

        from traces.services.upload import trace_upload

        data = transcript(args.calls)
        started, cpu = time.perf_counter(), time.process_time()
        trace = trace_upload(files=[("bench.json", data)], name="bench").trace
        ingest_s, ingest_cpu = time.perf_counter() - started, time.process_time() - cpu
        client = Client(HTTP_HOST="127.0.0.1")

        def get(path: str) -> None:
            reply = client.get(path)
            assert reply.status_code == 200, reply.status_code

        prefix = f"/traces/{trace.pk}/"
        late = max(1, args.calls - 100)
        pages = (
            ("trace page (first window)", prefix),
            (f"trace page (window at {late})", f"{prefix}?start={late}"),
            ("post-mortem", f"{prefix}postmortem"),
            (f"call {args.calls} inspector (last)", f"{prefix}calls/{args.calls}/"),
            ("diagram.json", f"{prefix}diagram.json"),
            ("what-if JSON", f"{prefix}what-if.json"),
            ("what-if JSON, a parameter changed", f"{prefix}what-if.json?clear_after=2"),
            ("figures.json (the page fetches it)", f"{prefix}figures.json"),
        )
        from traces.storage.report_cache import clear

        get("/rules/")  # warm: templates compiled, tokenizer and caches loaded
        base = median_time(lambda: get("/rules/"), args.repeat)
        timings = []
        for label, path in pages:
            clear()  # cold: the first visit decodes the stored report
            cold = median_time(lambda path=path: get(path), 1)
            warm = median_time(lambda path=path: get(path), args.repeat)
            timings.append((label, cold, warm))
        size = len(client.get(prefix).content)
    print(
        f"trace: {trace.calls_count} calls, {trace.tool_runs_count} tool runs, "
        f"{len(data) / 1024:.0f} KiB file, ingested in {ingest_s:.2f} s "
        f"(CPU {ingest_cpu:.2f} s; target at 10,000 calls: 5 s)"
    )
    print("cold: first visit, the report decoded; warm: later visits (cached report)")
    print(f"{'page':36s} {'cold wall':>10s} {'cold CPU':>10s} {'warm wall':>10s} {'warm CPU':>10s}")
    print(
        f"{'baseline: rules page':36s} {'':22s} {base[0] * 1000:7.1f} ms {base[1] * 1000:7.1f} ms"
    )
    for label, (cold_wall, cold_cpu), (wall, cpu) in timings:
        print(
            f"{label:36s} {cold_wall * 1000:7.1f} ms {cold_cpu * 1000:7.1f} ms "
            f"{wall * 1000:7.1f} ms {cpu * 1000:7.1f} ms  "
            f"({cpu / max(base[1], 1e-6):5.1f}x baseline CPU warm)"
        )
    slowest_cold = max(cold[1] for _, cold, _ in timings)
    slowest = max(warm[1] for _, _, warm in timings)
    print(
        f"trace page size: {size / 1024:.0f} KiB; slowest page {slowest_cold * 1000:.0f} ms CPU "
        f"cold, {slowest * 1000:.0f} ms CPU warm (target: every page under 1 s of server time)"
    )


def _longest_series(figures: dict) -> int:
    return max(
        (
            len(trace.get("x") or trace.get("y") or [])
            for figure in figures.values()
            if figure
            for trace in figure["data"]
        ),
        default=0,
    )


def sizes_main(sizes: list[int], repeat: int, session: bool) -> None:
    """The trace page at each size: HTML size, server time, the figures it fetches."""
    import html
    import re

    with tempfile.TemporaryDirectory() as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/page.sqlite3"
        os.environ.pop("REDIS_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        from django.test import Client

        from tests.core.long_session import make_session
        from traces.services.upload import trace_upload
        from traces.storage.report_cache import clear

        client = Client(HTTP_HOST="127.0.0.1")
        client.get("/rules/")
        base = median_time(lambda: client.get("/rules/"), repeat)
        print(f"baseline: rules page {base[1] * 1000:.1f} ms CPU warm")
        print(
            f"{'calls':>7s} {'HTML':>9s} {'cold CPU':>10s} {'warm CPU':>10s} {'x rules':>8s} "
            f"{'fetched':>9s} {'longest series':>15s}"
        )
        storage: list[tuple[int, ...]] = []
        moves: list[tuple[int, ...]] = []
        summaries: list[tuple[Any, ...]] = []
        for calls in sizes:
            data = make_session(calls) if session else transcript(calls)
            name = "bench.jsonl" if session else "bench.json"
            trace = trace_upload(files=[(name, data)], name=f"bench {calls}").trace
            path = f"/traces/{trace.pk}/"
            clear()
            cold = median_time(lambda path=path: client.get(path), 1)
            warm = median_time(lambda path=path: client.get(path), repeat)
            page = client.get(path).content
            text = page.decode()
            figures: dict = {}
            for body in re.findall(r'type="application/json">(.*?)</script>', text):
                figure = orjson.loads(html.unescape(body))
                if isinstance(figure, dict) and "data" in figure:
                    figures[str(len(figures))] = figure
            fetched = 0
            for src in set(re.findall(r'data-figure-src="([^"]+)"', text)):
                reply = client.get(html.unescape(src)).content
                fetched += len(reply)
                figures |= {f"{src}{k}": v for k, v in orjson.loads(reply)["figures"].items()}
            print(
                f"{calls:7,d} {len(page) / 1024:7.0f} KB {cold[1] * 1000:7.0f} ms "
                f"{warm[1] * 1000:7.0f} ms {warm[1] / max(base[1], 1e-6):7.1f}x "
                f"{fetched / 1024:6.0f} KB {_longest_series(figures):11,d} pts"
            )
            storage.append((calls, len(data), *_stored_sizes(trace)))
            summaries.append((calls, *_summary_pages(client, trace, path, repeat)))
            moves.append((calls, *_window_moves(client, trace, path, calls, repeat)))
    print("targets: HTML at most 500 KB at 20,000 calls; every series at most 2,000 points")
    print("\nstored report (issue 25: at most x1 the original); 'JSON' is what the report")
    print("column held before it was packed (0029_report), measured on the same report")
    print(f"{'calls':>7s} {'original':>10s} {'JSON':>10s} {'packed':>10s} {'parts':>10s} "
          f"{'stored/original':>16s} {'stored/JSON':>12s}")  # fmt: skip
    for calls, original, json_size, packed, parts in storage:
        stored = packed + parts
        print(
            f"{calls:7,d} {original / 1e6:7.2f} MB {json_size / 1e6:7.2f} MB "
            f"{packed / 1e6:7.2f} MB {parts / 1e6:7.2f} MB {stored / original:15.2f}x "
            f"{stored / json_size:11.3f}x"
        )
    print("\ntrace page (issues 25/24: < 150 ms warm, < 400 ms cold at 20,000 calls), server")
    print("time wall / CPU, from the page summary and window parts, then from the whole")
    print("report (the summary removed, as before it existed); x rules: CPU over the rules")
    print(f"page's ({base[1] * 1000:.1f} ms CPU warm, this run)")
    print(f"{'calls':>7s} {'source':>8s} {'cold wall':>10s} {'cold CPU':>9s} {'warm wall':>10s} "
          f"{'warm CPU':>9s} {'cold x rules':>13s} {'warm x rules':>13s}")  # fmt: skip
    for calls, *rows in summaries:
        for source, cold, warm in rows:
            print(
                f"{calls:7,d} {source:>8s} {cold[0] * 1000:7.0f} ms {cold[1] * 1000:6.0f} ms "
                f"{warm[0] * 1000:7.0f} ms {warm[1] * 1000:6.0f} ms "
                f"{cold[1] / max(base[1], 1e-6):12.1f}x {warm[1] / max(base[1], 1e-6):12.1f}x"
            )
    print("\nwindow move, diagram.json?parts=window (issue 24: < 150 ms at 20,000 calls), CPU;")
    print("baseline: the same moves drawn from the whole report (its parts removed), as before")
    print(f"{'calls':>7s} {'parts cold':>11s} {'parts warm':>11s} {'report cold':>12s} "
          f"{'report warm':>12s} {'warm ratio':>11s}")  # fmt: skip
    for calls, parts_cold, parts_warm, report_cold, report_warm in moves:
        print(
            f"{calls:7,d} {parts_cold * 1000:8.0f} ms {parts_warm * 1000:8.0f} ms "
            f"{report_cold * 1000:9.0f} ms {report_warm * 1000:9.0f} ms "
            f"{report_warm / max(parts_warm, 1e-6):10.1f}x"
        )
    print("(the machine is shared and loaded: absolute times are inflated, compare ratios)")


def _stored_sizes(trace) -> tuple[int, int, int]:
    """(the report's JSON bytes, its packed column's bytes, its parts' packed bytes)."""
    from django.db import connection

    from traces import fields

    with connection.cursor() as cursor:
        cursor.execute("SELECT report FROM traces_trace WHERE id = %s", [trace.pk.hex])
        packed = bytes(cursor.fetchone()[0])
        cursor.execute(
            "SELECT COALESCE(SUM(LENGTH(data)), 0) FROM traces_reportpart WHERE trace_id = %s",
            [trace.pk.hex],
        )
        parts = int(cursor.fetchone()[0])
    return fields.unpacked_size(packed), len(packed), parts


def _summary_pages(client, trace, path: str, repeat: int) -> tuple[tuple[Any, ...], ...]:
    """The trace page (cold: the report cache cleared; warm: later visits), from the page
    summary and then from the whole report (its summary removed for the measure)."""
    from traces import models
    from traces.storage.report_cache import clear

    def measure(source: str) -> tuple[Any, ...]:
        clear()
        cold = median_time(lambda: client.get(path), 1)
        warm = median_time(lambda: client.get(path), repeat)
        return source, cold, warm

    from_summary = measure("summary")
    kept = list(models.PageSummary.objects.filter(trace=trace))
    models.PageSummary.objects.filter(trace=trace).delete()
    from_report = measure("report")
    models.PageSummary.objects.bulk_create(kept)
    return from_summary, from_report


def _window_moves(client, trace, path: str, calls: int, repeat: int) -> tuple[float, ...]:
    """CPU seconds of a window move (cold, warm) from parts, then from the whole report."""
    from traces import models
    from traces.storage.report_cache import clear

    starts = [max(1, calls * k // (repeat + 1)) for k in range(1, repeat + 1)]

    def move(start: int) -> None:
        reply = client.get(f"{path}diagram.json?parts=window&start={start}&window=30")
        assert reply.status_code == 200, reply.status_code

    def measure() -> tuple[float, float]:
        clear()
        cold = median_time(lambda: move(1), 1)[1]
        warm = statistics.median(median_time(lambda s=s: move(s), 1)[1] for s in starts)
        return cold, warm

    from_parts = measure()
    kept = list(trace.report_parts.all())
    trace.report_parts.all().delete()
    from_report = measure()
    models.ReportPart.objects.bulk_create(kept)
    return (*from_parts, *from_report)


if __name__ == "__main__":
    main()
