"""Read speed per format: records per second, and ingest time as a ratio to a bare parse.

For every corpus file (../shared/corpus and the agents' stores in ../shared/agents, when
present) and for generated larger files of
the formats that can be generated, the core ingest (`analyze_bytes`: read, detect, adapt,
rebuild) is timed against a bare parse of the same bytes measured in the same run:
`orjson.loads` of every line (JSONL) or of the whole document (JSON), `yaml.load` with the
C loader when there is one (YAML cassettes), the members of a ZIP (Inspect `.eval`), after
gunzip for `.gz` files. Figures are per format: records ingested per second of ingest
(and rebuilt calls per second: a message-list file is one record of many calls), and
ingest time / bare-parse time (1.0 would mean reading the loop costs nothing beyond
parsing). Files the core refuses are listed apart. Nothing here touches Django.

    .venv/bin/python bench/formats.py [--corpus DIR] [--repeat 3] [--scale 1.0]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import sys
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from traces.core.analysis.ingest import analyze_bytes  # noqa: E402
from traces.core.reading.limits import InputRejected  # noqa: E402

YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SKIP = {"SOURCES.md", "AGENTS.md", "counts.json"}


@dataclass
class Sample:
    """One file's measurement."""

    name: str
    format: str
    records: int
    calls: int
    size: int
    ingest_s: float
    parse_s: float


def bare_parse(data: bytes, name: str) -> None:
    """Parse the bytes the cheapest way their container allows, and nothing more."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
        name = name.removesuffix(".gz")
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                if member.endswith(".json"):
                    orjson.loads(archive.read(member))
        return
    if name.endswith((".md", ".txt", ".log")):  # a text log: decoding and splitting its lines
        data.decode("utf-8", errors="replace").splitlines()
        return
    if name.endswith((".yaml", ".yml")):
        yaml.load(data, Loader=YAML_LOADER)  # the C *safe* loader
        return
    body = data.strip()
    if b"\n{" not in body and b"\n[" not in body:  # one JSON document (maybe indented)
        with contextlib.suppress(orjson.JSONDecodeError):
            orjson.loads(body)
            return
    for line in data.splitlines():  # JSON lines
        if line.strip():
            with contextlib.suppress(orjson.JSONDecodeError):
                orjson.loads(line)


def best_of(action: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` runs: the least disturbed by other work on a shared box."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(name: str, data: bytes, repeat: int) -> Sample | str:
    """A sample, or the reason the core refused the file."""
    try:
        trace = analyze_bytes(data, filename=name)
    except InputRejected as exc:
        return str(exc).split("\n")[0][:100]
    ingest_s = best_of(lambda: analyze_bytes(data, filename=name), repeat)
    parse_s = best_of(lambda: bare_parse(data, name), repeat)
    records, calls = trace.records_ingested, len(trace.calls)
    return Sample(name, trace.format, records, calls, len(data), ingest_s, parse_s)


# -- generated larger files -------------------------------------------------------------
def _codex_rollout(calls: int) -> bytes:
    def line(kind: str, payload: dict) -> bytes:
        return orjson.dumps({"timestamp": "2025-09-20T10:00:00Z", "type": kind, "payload": payload})

    lines = [
        line("session_meta", {"id": "bench", "timestamp": "2025-09-20T10:00:00Z"}),
        line("turn_context", {"model": "gpt-5-codex"}),
        line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "fix it"}],
            },
        ),
    ]
    total = 0
    for n in range(calls):
        call_id = f"call_{n}"
        arguments = orjson.dumps({"cmd": f"grep -n foo src/module_{n % 50}.py"}).decode()
        lines.append(
            line(
                "response_item",
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": arguments,
                    "call_id": call_id,
                },
            )
        )
        total += 1000 + 40 * n
        usage = {"input_tokens": 1000 + 40 * n, "cached_input_tokens": 900, "output_tokens": 30}
        info = {"total_token_usage": {"input_tokens": total}, "last_token_usage": usage}
        count = line("event_msg", {"type": "token_count", "info": info})
        lines += [count, count]  # Codex writes each token_count twice
        output = "Process exited with code 0\nOutput:\n" + "match line\n" * 20
        lines.append(
            line(
                "response_item",
                {"type": "function_call_output", "call_id": call_id, "output": output},
            )
        )
    return b"\n".join(lines) + b"\n"


def _openai_chat(calls: int) -> bytes:
    from page import transcript

    messages = orjson.loads(transcript(calls))["messages"]
    lines = []
    position = 2
    while position < len(messages):
        reply = messages[position]
        choice = {"index": 0, "message": reply, "finish_reason": "tool_calls"}
        body = {"id": f"c{position}", "object": "chat.completion", "choices": [choice]}
        record = {"request": {"model": "gpt-4o", "messages": messages[:position]}, "response": body}
        lines.append(orjson.dumps(record))
        position += 2
    return b"\n".join(lines) + b"\n"


def _otel_spans(calls: int) -> bytes:
    lines = []
    for n in range(calls):
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 1000 + n,
            "gen_ai.usage.output_tokens": 20,
            "gen_ai.input.messages": orjson.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": f"step {n}"}]}]
            ).decode(),
            "gen_ai.output.messages": orjson.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": "ok " * 20}]}]
            ).decode(),
        }
        span = {
            "traceId": f"t{n // 20}",
            "spanId": f"s{n}",
            "name": "chat gpt-4o",
            "startTimeUnixNano": str((1_760_000_000 + n) * 10**9),
            "endTimeUnixNano": str((1_760_000_001 + n) * 10**9),
            "attributes": [
                {"key": k, "value": {"intValue" if isinstance(v, int) else "stringValue": v}}
                for k, v in attributes.items()
            ],
        }
        lines.append(orjson.dumps(span))
    return b"\n".join(lines) + b"\n"


def generated(scale: float) -> list[tuple[str, bytes]]:
    """Larger files of five formats, made here so the figures do not depend on the corpus."""
    from ingest import make_log
    from page import transcript

    def size(n: int) -> int:
        return max(10, int(n * scale))

    return [
        ("generated-anthropic-200.jsonl", make_log(size(200), 1024)),
        ("generated-message-list-2000.json", transcript(size(2000))),
        ("generated-codex-1000.jsonl", _codex_rollout(size(1000))),
        ("generated-openai-chat-150.jsonl", _openai_chat(size(300))),
        ("generated-otel-5000.jsonl", _otel_spans(size(5000))),
    ]


# -- report ----------------------------------------------------------------------------
def table(title: str, samples: list[Sample]) -> None:
    by_format: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_format[sample.format].append(sample)
    print(f"\n{title}")
    print(
        f"{'format':<20} {'files':>5} {'MiB':>8} {'records':>9} {'calls':>7} {'ingest ms':>10}"
        f" {'parse ms':>9} {'records/s':>11} {'calls/s':>9} {'ingest/parse':>13}"
    )
    for name in sorted(by_format):
        group = by_format[name]
        records = sum(s.records for s in group)
        calls = sum(s.calls for s in group)
        ingest = sum(s.ingest_s for s in group)
        parse = sum(s.parse_s for s in group)
        size = sum(s.size for s in group) / (1024 * 1024)
        rate = records / ingest if ingest else 0.0
        call_rate = calls / ingest if ingest else 0.0
        ratio = ingest / parse if parse else float("inf")
        print(
            f"{name:<20} {len(group):>5} {size:>8.2f} {records:>9,} {calls:>7,}"
            f" {ingest * 1000:>10.1f} {parse * 1000:>9.1f} {rate:>11,.0f} {call_rate:>9,.0f}"
            f" {ratio:>13.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument(
        "--agents",
        type=Path,
        default=ROOT.parent / "shared" / "agents",
        help="coding agents' session stores (each file alone; a session folder's parts are "
        "measured with the other readers' files)",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="size of the generated files")
    args = parser.parse_args()

    refused: list[tuple[str, str]] = []
    for title, folder in (("Corpus files", args.corpus), ("Agent session stores", args.agents)):
        if not folder.is_dir():
            print(f"no corpus at {folder}: skipped")
            continue
        samples: list[Sample] = []
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if path.name in SKIP:
                continue
            result = measure(path.name, path.read_bytes(), args.repeat)
            relative = str(path.relative_to(folder))
            if isinstance(result, Sample):
                samples.append(result)
            else:
                refused.append((relative, result))
        table(f"{title} ({folder}), best of {args.repeat}", samples)
    generated_samples = []
    for name, data in generated(args.scale):
        result = measure(name, data, args.repeat)
        if isinstance(result, Sample):
            generated_samples.append(result)
        else:
            refused.append((name, result))
    table(f"Generated files, best of {args.repeat}", generated_samples)
    for sample in generated_samples:
        mib = sample.size / (1024 * 1024)
        print(
            f"  {sample.name:<34} {sample.format:<18} {sample.records:>7,} records"
            f" {mib:>7.2f} MiB  ratio {sample.ingest_s / sample.parse_s:.2f}"
        )
    if refused:
        print(f"\nRefused ({len(refused)}): the core reads no trace from them on this branch")
        for name, reason in refused:
            print(f"  {name}: {reason}")


if __name__ == "__main__":
    main()
