"""Ingest speed, memory and storage on a generated 200-call request log.

Prints ingest time (parse + rebuild + store on SQLite) as a ratio to a bare
`orjson.loads` of every line of the same file, measured in the same run; peak Python
memory of an ingest; and stored bytes against file bytes. Targets (issue 2): ratio <= 4,
stored bytes <= 10% of the file.

    .venv/bin/python bench/ingest.py [--calls 200] [--result-bytes 2048] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import string
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_log(calls: int, result_bytes: int, seed: int = 7) -> bytes:
    """A realistic Anthropic pair log: every request re-sends the whole transcript."""
    rng = random.Random(seed)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(400)]

    def prose(size: int) -> str:
        out: list[str] = []
        length = 0
        while length < size:
            word = rng.choice(words)
            out.append(word)
            length += len(word) + 1
        return " ".join(out)[:size]

    system = prose(6000)
    tools = [
        {
            "name": f"tool_{n}",
            "description": prose(400),
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["path"],
            },
        }
        for n in range(8)
    ]
    messages: list[dict] = [{"role": "user", "content": prose(300)}]
    lines = []
    clock = 1_790_000_000.0
    for n in range(calls):
        last = n == calls - 1
        tool_id = f"toolu_{n:05d}{rng.randrange(16**8):08x}"
        content = [{"type": "text", "text": prose(160)}]
        if not last:
            content.append(
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": f"tool_{n % 8}",
                    "input": {"path": f"src/module_{n}.py", "limit": 200},
                }
            )
        body = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 4096,
            "system": system,
            "tools": tools,
            "messages": messages,
        }
        response = {
            "id": f"msg_{n:05d}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": content,
            "stop_reason": "end_turn" if last else "tool_use",
            "usage": {
                "input_tokens": 12,
                "cache_read_input_tokens": 3000 + 600 * n,
                "cache_creation_input_tokens": 600,
                "output_tokens": 90,
            },
        }
        lines.append(
            orjson.dumps(
                {
                    "request": {
                        "timestamp": clock,
                        "method": "POST",
                        "url": "/v1/messages",
                        "body": body,
                    },
                    "response": {"timestamp": clock + 2.5, "status_code": 200, "body": response},
                }
            )
        )
        clock += 3.0
        messages = [
            *messages,
            {"role": "assistant", "content": content},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": tool_id, "content": prose(result_bytes)}
                ],
            },
        ]
    return b"\n".join(lines) + b"\n"


def setup_django(db_path: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{db_path}"
    os.environ["INSPECTOR_DATA_DIR"] = str(Path(db_path).parent / "data")  # originals
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def baseline(data: bytes) -> float:
    started = time.perf_counter()
    for line in data.splitlines():
        orjson.loads(line)
    return time.perf_counter() - started


def ingest(data: bytes) -> tuple[float, object]:
    from traces.services.upload import trace_upload

    started = time.perf_counter()
    result = trace_upload(files=[("bench.jsonl", data)], name="bench")
    return time.perf_counter() - started, result.trace


def stored_bytes(trace) -> dict[str, int]:
    from django.db import connection

    from traces import models
    from traces.storage import originals

    digests: set[str] = set()
    row_bytes = 0
    for call in models.Call.objects.filter(trace=trace):
        digests.update(call.appended_digests)
        digests.update(call.appended_message_digests or ())
        digests.update(
            d
            for d in (
                call.system_digest,
                call.tools_digest,
                call.response_digest,
                call.response_message_digest,
                call.extra_digest,
            )
            if d
        )
        row_bytes += 200 + 41 * (
            len(call.appended_digests) + len(call.appended_message_digests or ())
        )
    for run in models.ToolRun.objects.filter(trace=trace):
        digests.add(run.input_digest)
        row_bytes += 150 + len(run.result_preview.encode())
    blob_bytes = sum(len(b.data) for b in models.Blob.objects.filter(digest__in=digests))
    store = originals.storage()
    archive = sum(store.size(c.key) for c in models.SourceChunk.objects.filter(trace=trace))
    connection.close()
    return {"blobs": blob_bytes, "rows": row_bytes, "archive": archive}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--result-bytes", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    data = make_log(args.calls, args.result_bytes)
    with tempfile.TemporaryDirectory() as folder:
        setup_django(str(Path(folder) / "bench.sqlite3"))
        base_times = [baseline(data) for _ in range(args.repeat)]
        ingest_times = []
        trace = None
        for _ in range(args.repeat):
            seconds, trace = ingest(data)
            ingest_times.append(seconds)
        from traces.core.analysis.ingest import analyze_bytes
        from traces.core.outputs.report import build_report

        rebuild_times, report_times = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            core = analyze_bytes(data)
            rebuild_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            build_report(core)
            report_times.append(time.perf_counter() - started)
        tracemalloc.start()
        ingest(data)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        sizes = stored_bytes(trace)

    base = statistics.median(base_times)
    spent = statistics.median(ingest_times)
    content = sizes["blobs"] + sizes["rows"]
    mib = 1024 * 1024
    print(f"file: {args.calls} calls, {args.result_bytes} B results, {len(data) / mib:.1f} MiB")
    print(f"bare orjson.loads of every line: {base * 1000:8.1f} ms (median of {args.repeat})")
    print(f"ingest (parse+rebuild+store):    {spent * 1000:8.1f} ms (median of {args.repeat})")
    rebuild = statistics.median(rebuild_times)
    analysis = statistics.median(report_times)
    print(f"  of which read + rebuild:       {rebuild * 1000:8.1f} ms")
    print(f"  of which accounting + lint:    {analysis * 1000:8.1f} ms")
    print(f"  of which store (rest):         {(spent - rebuild - analysis) * 1000:8.1f} ms")
    print(f"ratio ingest / orjson:           {spent / base:8.2f}")
    print(
        f"ratio parse + rebuild + store:   {(spent - analysis) / base:8.2f}   (target <= 4; "
        "accounting and lint came later and are measured apart)"
    )
    print(f"peak Python memory of an ingest: {peak / mib:8.1f} MiB ({peak / len(data):.2f}x file)")
    print(
        f"stored content (blobs + rows):   {content / 1024:8.1f} KiB "
        f"= {100 * content / len(data):.2f}% of the file (target <= 10%)"
    )
    print(
        f"original kept (zstd, long mode): {sizes['archive'] / 1024:8.1f} KiB "
        f"= {100 * sizes['archive'] / len(data):.2f}% of the file"
    )
    total = content + sizes["archive"]
    print(
        f"all stored bytes:                {total / 1024:8.1f} KiB "
        f"= {100 * total / len(data):.2f}% of the file"
    )


if __name__ == "__main__":
    main()
