"""Server time of the trace page and the post-mortem on a 2,000-call trace.

The trace is a chat transcript (one JSON list of messages: the message-list format), so
2,000 calls take megabytes, not the gigabytes a request log re-sending its transcript
would. It goes through the real upload path, then the pages are fetched with Django's
test client (no network), as a ratio to the rules page measured in the same run. Target
(issue "See the loop"): the trace page under 1 s of server time.

    .venv/bin/python bench/page.py [--calls 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


def median_time(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/page.sqlite3"
        os.environ.pop("REDIS_URL", None)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        from django.test import Client

        from traces import services

        data = transcript(args.calls)
        started = time.perf_counter()
        trace = services.trace_ingest(data=data, name="bench", filename="bench.json").trace
        ingest_s = time.perf_counter() - started
        client = Client(HTTP_HOST="127.0.0.1")

        def get(path: str) -> None:
            reply = client.get(path)
            assert reply.status_code == 200, reply.status_code

        base = median_time(lambda: get("/rules/"), args.repeat)
        page = median_time(lambda: get(f"/traces/{trace.pk}/"), args.repeat)
        later = median_time(lambda: get(f"/traces/{trace.pk}/?start=1900"), args.repeat)
        postmortem = median_time(lambda: get(f"/traces/{trace.pk}/postmortem"), args.repeat)
        call = median_time(lambda: get(f"/traces/{trace.pk}/calls/{args.calls}/"), args.repeat)
        size = len(client.get(f"/traces/{trace.pk}/").content)
    print(
        f"trace: {trace.calls_count} calls, {trace.tool_runs_count} tool runs, "
        f"{len(data) / 1024:.0f} KiB file, ingested in {ingest_s:.2f} s"
    )
    print(f"baseline: rules page             {base * 1000:8.1f} ms")
    for label, seconds in (
        ("trace page (first window)", page),
        ("trace page (window at 1900)", later),
        ("post-mortem", postmortem),
        (f"call {args.calls} inspector", call),
    ):
        print(f"{label:32s} {seconds * 1000:8.1f} ms  ({seconds / base:5.1f}x baseline)")
    print(f"trace page size: {size / 1024:.0f} KiB (target: under 1 s of server time)")


if __name__ == "__main__":
    main()
