"""OTLP receiver throughput: 100 agent runs x 20 spans exported and viewable.

Starts a local daphne (fresh SQLite file, the embedded queue, in-memory channel layer),
makes 100 agent runs of 10 chat spans and 10 execute_tool spans each (GenAI semantic
conventions, the transcript growing call by call) with the real OpenTelemetry SDK, then
exports them with the OTLP/HTTP protobuf exporter (BatchSpanProcessor, its default 512
spans per request) and times, from the start of the export:

- answered: each export request, until the exporter has its answer (p50, p95);
- exported: the exporter has had every request answered;
- viewable: every run is a live trace with its 10 calls stored (its page shows them);
- reported: every run's report (accounting, findings) covers all its spans.

Baselines, measured in the same run: the same spans serialised to OTLP protobuf and
parsed back in this process (the floor of any receiver), and the previous synchronous
receiver (issue 25: it stored every trace before answering), served from a `git archive`
of `--against` (default: where this branch left main) by the same venv. The two
daphnes take turns, `--rounds` times each, on a fresh database each time; medians are
printed, and the ratios of this tree's to the previous one's.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/otlp.py [--runs 100] [--calls 10]
        [--rounds 3] [--against REV | --against none]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
)
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from proxy import daphne_cpu  # noqa: E402  (bench/proxy.py)

from tests.live.servers import _wait_for_port, free_port, server_env  # noqa: E402


def make_runs(provider: TracerProvider, runs: int, calls: int) -> list[str]:
    """The runs' spans, ended (so queued for export); their trace ids."""
    tracer = provider.get_tracer("bench-agent")
    trace_ids = []
    for run in range(runs):
        messages = [{"role": "user", "parts": [{"type": "text", "content": f"task {run}"}]}]
        with tracer.start_as_current_span(f"run {run}") as root:
            for call in range(calls):
                last = call == calls - 1
                tool_id = f"call_{run}_{call}"
                parts = (
                    [{"type": "text", "content": "done"}]
                    if last
                    else [
                        {
                            "type": "tool_call",
                            "id": tool_id,
                            "name": "search",
                            "arguments": {"q": call},
                        }
                    ]
                )
                reply = {"role": "assistant", "parts": parts}
                with tracer.start_as_current_span("chat gpt-4o") as span:
                    span.set_attributes(
                        {
                            "gen_ai.operation.name": "chat",
                            "gen_ai.request.model": "gpt-4o",
                            "gen_ai.input.messages": json.dumps(messages),
                            "gen_ai.output.messages": json.dumps([reply]),
                            "gen_ai.usage.input_tokens": 100 + 30 * call,
                            "gen_ai.usage.output_tokens": 20,
                        }
                    )
                messages.append(reply)
                with tracer.start_as_current_span("execute_tool search") as span:
                    span.set_attributes(
                        {
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": "search",
                            "gen_ai.tool.call.id": tool_id,
                        }
                    )
                if not last:
                    result = {"type": "tool_call_response", "id": tool_id, "response": f"r{call}"}
                    messages.append({"role": "tool", "parts": [result]})
            trace_ids.append(format(root.get_span_context().trace_id, "032x"))
    return trace_ids


def stored(database: Path, trace_ids: list[str], calls: int) -> tuple[int, int]:
    """(runs whose calls are all stored, runs whose report covers every line)."""
    keys = [f"otlp:{t}" for t in trace_ids]
    marks = ",".join("?" * len(keys))
    with sqlite3.connect(database, timeout=30) as db:
        rows = db.execute(
            "SELECT calls_count, report_lines, lines_total FROM traces_trace "
            f"WHERE capture_key IN ({marks})",
            keys,
        ).fetchall()
    viewable = sum(1 for count, _, _ in rows if count >= calls)
    reported = sum(1 for count, covered, total in rows if count >= calls and covered >= total)
    return viewable, reported


class TimedExporter(OTLPSpanExporter):
    """The SDK's exporter, timing each request from its sending to its answer (the
    encoding before it aside)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.answered: list[float] = []
        send = self._client.export

        def timed(*sent, **options):
            started = time.perf_counter()
            try:
                return send(*sent, **options)
            finally:
                self.answered.append(time.perf_counter() - started)

        self._client.export = timed


@contextmanager
def served(root: Path, folder: Path) -> Iterator[tuple[str, Path]]:
    """A daphne of the tree at `root` on a fresh SQLite file: (base URL, database)."""
    database = folder / "bench.sqlite3"
    env = server_env(DATABASE_URL=f"sqlite:///{database}", REDIS_URL="")
    env["PYTHONPYCACHEPREFIX"] = os.environ.get("PYTHONPYCACHEPREFIX") or str(folder / "pyc")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=root, env=env, check=True, timeout=300,
    )  # fmt: skip
    port = free_port()
    log_path = folder / "daphne.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
             "inspector.asgi:application"],
            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            _wait_for_port(port, process, log_path)
            yield f"http://127.0.0.1:{port}", database
        finally:
            process.terminate()
            process.wait(timeout=30)


def one_round(root: Path, runs: int, calls: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder, served(root, Path(folder)) as (base, database):
        resource = Resource.create({"service.name": "bench-agent"})
        exporter = TimedExporter(endpoint=f"{base}/v1/traces", timeout=120)
        processor = BatchSpanProcessor(
            exporter, max_queue_size=100_000, schedule_delay_millis=3_600_000
        )
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(processor)
        trace_ids = make_runs(provider, runs, calls)
        cpu_before = daphne_cpu(base)
        started = time.perf_counter()
        provider.force_flush(timeout_millis=300_000)
        exported = time.perf_counter() - started
        viewable_at = reported_at = float("nan")
        while time.perf_counter() - started < 300:
            viewable, reported = stored(database, trace_ids, calls)
            now = time.perf_counter() - started
            if viewable_at != viewable_at and viewable == runs:  # still NaN
                viewable_at = now
            if reported == runs:
                reported_at = now
                break
            time.sleep(0.01)
        cpu_after = daphne_cpu(base)
        answered = sorted(exporter.answered)
        return {
            "requests": len(answered),
            "p50": statistics.median(answered),
            "p95": answered[min(len(answered) - 1, round(0.95 * (len(answered) - 1)))],
            "exported": exported,
            "viewable": viewable_at,
            "reported": reported_at,
            "cpu": (cpu_after - cpu_before) if cpu_before is not None and cpu_after else 0.0,
        }


def floor(runs: int, calls: int) -> tuple[float, float, int]:
    """(serialise ms, parse ms, bytes) of the same spans, in 512-span requests, here."""
    memory = InMemorySpanExporter()
    baseline = TracerProvider(resource=Resource.create({"service.name": "bench-agent"}))
    baseline.add_span_processor(SimpleSpanProcessor(memory))
    make_runs(baseline, runs, calls)
    spans = memory.get_finished_spans()
    started = time.perf_counter()
    bodies = [
        encode_spans(spans[i : i + 512]).SerializeToString() for i in range(0, len(spans), 512)
    ]
    encode_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    for body in bodies:
        ExportTraceServiceRequest.FromString(body)
    parse_ms = (time.perf_counter() - started) * 1000
    return encode_ms, parse_ms, sum(len(b) for b in bodies)


def previous_tree(revision: str, folder: Path) -> Path:
    """The tree at `revision`, extracted with `git archive` (the venv is this one's)."""
    tree = folder / "previous"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "archive", revision], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def median(rounds: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rounds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--calls", type=int, default=10, help="chat spans per run (and tools)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--against",
        default="",
        help="the revision of the previous receiver (default: merge-base with main; none: skip)",
    )
    args = parser.parse_args()
    against = (
        args.against
        or subprocess.run(
            ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    )
    with tempfile.TemporaryDirectory() as folder:
        trees = {"this tree": ROOT}
        if against and against != "none":
            trees["previous (synchronous)"] = previous_tree(against, Path(folder))
        results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for round_number in range(1, args.rounds + 1):
            for name, root in trees.items():
                figures = one_round(root, args.runs, args.calls)
                results[name].append(figures)
                # Each round as it ends: a run cut short on a loaded machine still says some.
                print(
                    f"round {round_number}, {name}: "
                    + ", ".join(f"{key} {value:.3f}" for key, value in figures.items()),
                    flush=True,
                )
        encode_ms, parse_ms, nbytes = floor(args.runs, args.calls)
    total_spans = args.runs * args.calls * 2 + args.runs
    print(
        f"{args.runs} runs x {args.calls * 2} spans (+1 root each) = {total_spans} spans, "
        f"{nbytes / 1e6:.1f} MB of protobuf; daphne on SQLite, embedded queue; "
        f"medians of {args.rounds} rounds"
    )
    print(
        f"floor here: serialising them {encode_ms:.1f} ms, parsing them back (protobuf) "
        f"{parse_ms:.1f} ms"
    )
    rows = [
        ("answered p50 (s)", "p50"),
        ("answered p95 (s)", "p95"),
        ("exported, every request answered (s)", "exported"),
        (f"viewable, every run's {args.calls} calls stored (s)", "viewable"),
        ("reported, every run's report complete (s)", "reported"),
        ("daphne CPU until reported (s)", "cpu"),
    ]
    names = list(trees)
    print(
        f"{'':44}"
        + "".join(f"{name:>24}" for name in names)
        + ("  ratio" if len(names) > 1 else "")
    )
    for label, key in rows:
        values = [median(results[name], key) for name in names]
        line = f"{label:44}" + "".join(f"{value:>24.3f}" for value in values)
        if len(values) > 1 and values[1]:
            line += f"  {values[0] / values[1]:.2f}x"
        print(line)
    requests = int(median(results[names[0]], "requests"))
    p50_ms = median(results[names[0]], "p50") * 1000
    print(
        f"({requests} export requests per round; this tree's answered p50 is "
        f"{p50_ms / (encode_ms / requests):.1f}x serialising one request here and "
        f"{p50_ms / max(parse_ms / requests, 1e-3):.0f}x parsing one)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
