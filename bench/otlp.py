"""OTLP receiver throughput: 100 agent runs x 20 spans exported and viewable.

Starts a local daphne (fresh SQLite file, in-memory channel layer), makes 100 agent runs
of 10 chat spans and 10 execute_tool spans each (GenAI semantic conventions, the
transcript growing call by call) with the real OpenTelemetry SDK, then exports them with
the OTLP/HTTP protobuf exporter (BatchSpanProcessor, its default 512 spans per request)
and times, from the start of the export:

- exported: the exporter has had every request answered;
- viewable: every run is a live trace with its 10 calls stored (its page shows them);
- reported: every run's report (accounting, findings) covers all its spans.

The baseline, measured in the same run: the same 2,000 spans serialised to OTLP
protobuf in this process (what the exporter does before sending).

    .venv/bin/python bench/otlp.py [--runs 100] [--calls 10]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from proxy import daphne_cpu  # noqa: E402  (bench/proxy.py)

from tests.capture.scenario import ports  # noqa: E402
from tests.live.servers import daphne, migrate, server_env  # noqa: E402


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--calls", type=int, default=10, help="chat spans per run (and tools)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "bench.sqlite3"
        env = server_env(DATABASE_URL=f"sqlite:///{database}", REDIS_URL="")
        migrate(env)
        with daphne(env, Path(folder) / "daphne.log", ports() or None) as base:
            resource = Resource.create({"service.name": "bench-agent"})
            memory = InMemorySpanExporter()
            baseline = TracerProvider(resource=resource)
            from opentelemetry.sdk.trace.export import SimpleSpanProcessor

            baseline.add_span_processor(SimpleSpanProcessor(memory))
            make_runs(baseline, args.runs, args.calls)
            spans = memory.get_finished_spans()
            started = time.perf_counter()
            encode_spans(spans).SerializeToString()
            encode_ms = (time.perf_counter() - started) * 1000

            exporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces", timeout=120)
            processor = BatchSpanProcessor(
                exporter, max_queue_size=100_000, schedule_delay_millis=3_600_000
            )
            provider = TracerProvider(resource=resource)
            provider.add_span_processor(processor)
            trace_ids = make_runs(provider, args.runs, args.calls)
            total_spans = args.runs * args.calls * 2 + args.runs
            cpu_before = daphne_cpu(base)
            started = time.perf_counter()
            provider.force_flush(timeout_millis=300_000)
            exported = time.perf_counter() - started
            viewable_at = reported_at = None
            while time.perf_counter() - started < 300:
                viewable, reported = stored(database, trace_ids, args.calls)
                now = time.perf_counter() - started
                if viewable_at is None and viewable == args.runs:
                    viewable_at = now
                if reported == args.runs:
                    reported_at = now
                    break
                time.sleep(0.02)
            cpu_after = daphne_cpu(base)
            print(f"daphne at {base} (SQLite, in-memory layer)")
            print(
                f"{args.runs} runs x {args.calls * 2} spans (+1 root each) = {total_spans} spans; "
                f"baseline: serialising them to OTLP protobuf here {encode_ms:.0f} ms"
            )
            print(f"exported (every request answered): {exported:.2f} s")
            viewable_s = viewable_at or float("nan")
            print(f"viewable (every run's {args.calls} calls stored): {viewable_s:.2f} s")
            print(f"reported (every run's report complete): {reported_at or float('nan'):.2f} s")
            if cpu_before is not None and cpu_after is not None:
                print(
                    f"daphne CPU from the export's start to every report complete: "
                    f"{cpu_after - cpu_before:.2f} s (the figure other processes on a shared "
                    "machine do not change)"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
