"""Hostile inputs: time and peak memory until the answer, for the worst inputs of issue 9.

Part 1, the core (each input in a fresh process, through
`traces.services.ingest.ingest_prepare`, the
path every upload takes): wall time, CPU time and peak RSS growth until the refusal or
the result. Before issue 9 the 199 KB gzip array took 172 s of CPU and 10.2 GB, and the
gzip bomb 2.4 GB of RSS per request.

Part 2, issue 26's inputs (each in a fresh process): a mapping whose JMESPath doubles its
value 22 times then serialises it (21.7 GB and a killed daphne before), bracket nesting
30,000 deep in an expression and 50,000 deep in the mapping file (RecursionError), and a
run set of nested ZIPs (each level had its own 2 GiB budget). Target: answered in < 1 s
and < 300 MB.

Part 3, a real daphne on a loopback port (fresh SQLite file): a body of newlines sent
raw and as multipart (the baseline is the raw body, in the same run: multipart used to be
~50x slower because Twisted parsed the form in its reactor), the time to refuse a 5.2 GB
Content-Length, and the latency of a page while a large multipart upload is ingested.

    .venv/bin/python bench/abuse.py [--newline-mb 100] [--skip-server] [--port N]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.live.servers import daphne, migrate, server_env  # noqa: E402

CORE_CASES = [
    "gzip-array-199k",
    "gzip-bomb",
    "array-3M-objects",
    "yaml-deep",
    "deep-json-line",
    "nul-everywhere",
    "usage-2^63",
]

MEASURE = """
import json, os, resource, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inspector.settings")
import django
django.setup()
from tests.hostile.cases import by_id
from traces.core.reading.limits import InputRejected
from traces.services.ingest import ingest_prepare
case = by_id()[sys.argv[1]]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
cpu, wall = time.process_time(), time.perf_counter()
try:
    ingest_prepare(files=[(case.filename, case.data)], name="bench")
    answer = "stored"
except InputRejected as exc:
    answer = "400: " + str(exc)
print(json.dumps({
    "input": len(case.data),
    "wall": time.perf_counter() - wall,
    "cpu": time.process_time() - cpu,
    "rss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
    "answer": answer,
}))
"""


COST_CASES = {
    "mapping-2^22": "mapping_bomb",
    "jmespath-30k-parens": "deep_expression",
    "mapping-50k-deep": "deep_mapping",
    "nested-zip-set": "nested_zips",
}

COST_MEASURE = """
import io, json, resource, sys, time, zipfile
from traces.core.analysis.ingest import analyze_bytes
from traces.core.reading.limits import InputRejected
from traces.core.reading.mapping import load_mapping
from traces.core.reading.runs import split_runs
from traces.core.reading.sample import sample_bytes

def mapping_bomb():  # each returns the work to time; building the input is not timed
    source = "@" + " | [@, @]" * 22 + " | to_string(@)"
    text = f"calls:\\n  where: kind == 'llm'\\n  model: \\"{source}\\"\\n"
    return lambda: analyze_bytes(b'{"kind": "llm"}\\n', mapping=load_mapping(text.encode()))

def deep_expression():
    text = 'calls:\\n  where: "' + "(" * 30_000 + "a" + ")" * 30_000 + '"\\n'
    return lambda: load_mapping(text.encode())

def deep_mapping():
    text = b"calls:\\n  where: x\\nname: " + b"[" * 50_000 + b"]" * 50_000 + b"\\n"
    return lambda: load_mapping(text)

def nested_zips():
    data = b"\\n" * (64 * 1024 * 1024)
    for level in range(3):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for n in range(4):
                archive.writestr(f"level{level}-{n}.zip" if level else f"{n}.jsonl", data)
        data = buffer.getvalue()

    def split():
        runs, problems = split_runs([("set.zip", data)])
        if problems:
            raise InputRejected(problems[0].message)
    return split

work = globals()[sys.argv[1]]()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
wall = time.perf_counter()
try:
    work()
    answer = "accepted"
except InputRejected as exc:
    answer = "400: " + str(exc)
print(json.dumps({
    "wall": time.perf_counter() - wall,
    "rss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
    "answer": answer,
}))
"""


def cost_figures() -> None:
    print("Issue 26: work bounded by cost (fresh process per input); target < 1 s, < 300 MB")
    print(f"{'input':<22} {'wall s':>8} {'RSS MB':>7}  answer")
    for label, function in COST_CASES.items():
        done = subprocess.run(
            [sys.executable, "-c", COST_MEASURE, function],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if done.returncode:
            print(f"{label:<22} failed: {done.stderr[-300:]}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        answer = r["answer"].replace("\n", " ")[:80]
        print(f"{label:<22} {r['wall']:>8.2f} {r['rss_mb']:>7.1f}  {answer}")


def core_figures() -> None:
    print("Core: time and peak RSS growth until the answer (fresh process per input)")
    print(f"{'input':<20} {'bytes':>11} {'wall s':>8} {'cpu s':>7} {'RSS MB':>7}  answer")
    for case_id in CORE_CASES:
        done = subprocess.run(
            [sys.executable, "-c", MEASURE, case_id],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if done.returncode:
            print(f"{case_id:<20} failed: {done.stderr[-300:]}")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        answer = r["answer"].replace("\n", " ")[:70]
        print(
            f"{case_id:<20} {r['input']:>11,} {r['wall']:>8.2f} {r['cpu']:>7.2f} "
            f"{r['rss_mb']:>7.1f}  {answer}"
        )


def post(url: str, body: bytes, content_type: str) -> tuple[int, float]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": content_type})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=900) as reply:
            reply.read()
            status = reply.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    return status, time.perf_counter() - started


def multipart(name: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    return (
        head + data + f"\r\n--{boundary}--\r\n".encode(),
        f"multipart/form-data; boundary={boundary}",
    )


def refuse_time(url: str) -> tuple[bytes, float]:
    host, port = url.removeprefix("http://").split(":")
    started = time.perf_counter()
    with socket.create_connection((host, int(port)), timeout=60) as conn:
        conn.sendall(
            b"POST /api/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n"
            b"Content-Length: 5200000000\r\n\r\n"
        )
        status = conn.recv(64).split(b"\r\n", 1)[0]
    return status, time.perf_counter() - started


def page_latency_during(url: str, body: bytes, content_type: str) -> tuple[float, list[float]]:
    outcome: dict[str, float] = {}

    def upload() -> None:
        outcome["upload"] = post(f"{url}/api/traces", body, content_type)[1]

    worker = threading.Thread(target=upload)
    worker.start()
    time.sleep(0.2)
    latencies = []
    while worker.is_alive():
        started = time.perf_counter()
        with urllib.request.urlopen(f"{url}/rules/", timeout=900) as reply:
            reply.read()
        latencies.append(time.perf_counter() - started)
        time.sleep(0.05)
    worker.join()
    return outcome["upload"], latencies


def server_figures(newline_mb: int, port: int | None) -> None:
    from tests.live.events import agent_lines, ndjson

    with tempfile.TemporaryDirectory() as folder:
        env = server_env(DATABASE_URL=f"sqlite:///{folder}/bench.sqlite3", REDIS_URL="")
        migrate(env)
        with daphne(env, Path(folder) / "daphne.log", port=port) as url:
            print(f"\nServer (daphne, {url}):")
            newlines = b"\n" * (newline_mb * 1024 * 1024)
            status, raw_s = post(f"{url}/api/traces", newlines, "application/x-ndjson")
            print(f"  {newline_mb} MB of newlines, raw body:        {raw_s:7.2f} s  ({status})")
            body, kind = multipart("n.jsonl", newlines)
            status, multi_s = post(f"{url}/api/traces", body, kind)
            print(
                f"  {newline_mb} MB of newlines, multipart:       {multi_s:7.2f} s  ({status}); "
                f"{multi_s / raw_s:.1f}x the raw body (was ~50x)"
            )
            status_line, refused_s = refuse_time(url)
            print(
                f"  Content-Length 5.2 GB refused in:      {refused_s:7.3f} s  "
                f"({status_line.decode()})"
            )
            trace = ndjson(agent_lines(800))
            body, kind = multipart("big.jsonl", trace)
            upload_s, latencies = page_latency_during(url, body, kind)
            print(
                f"  page latency during a {len(trace) / 1e6:.0f} MB multipart ingest "
                f"({upload_s:.1f} s): median {statistics.median(latencies) * 1000:.0f} ms, "
                f"max {max(latencies) * 1000:.0f} ms over {len(latencies)} requests"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--newline-mb", type=int, default=100)
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--port", type=int, default=None, help="loopback port (default: free)")
    args = parser.parse_args()
    core_figures()
    print()
    cost_figures()
    if not args.skip_server:
        server_figures(args.newline_mb, args.port)


if __name__ == "__main__":
    main()
