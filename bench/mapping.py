"""What the mapping language's features cost: one loop log written five ways, read with a mapping.

The same generated loop (N model calls, each asking for one tool, each tool answered by a
result record) is written as JSONL with ids (the baseline), with the payloads kept as
JSON text and read with `from_json`, as a text log split by a line pattern, with every
record logged twice and collapsed by `dedupe`, and without ids (paired by order and
name). Each is read with `analyze_bytes` and timed; the figures are records per second
and the ratio to the baseline measured in the same run (1.0: the feature costs nothing).
A bare `orjson.loads` of the baseline's lines is printed too, for scale.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/mapping.py [--calls 3000] [--repeat 3]

Bytecode is cached in a folder of the run (`sys.pycache_prefix`), not in the checkout.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.pycache_prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(ROOT / ".bench-pycache")
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from traces.core.analysis.ingest import analyze_bytes  # noqa: E402
from traces.core.reading.mapping import load_mapping  # noqa: E402

BASE = b"""
calls: {where: "ev == 'model'", response: "@", model: model}
messages: {text: say, tool_calls: calls}
tool_calls: {id: id, name: tool, arguments: input}
tool_results: {where: "ev == 'result'", id: id, name: tool, content: output}
usage: {input_tokens: tin, output_tokens: tout}
"""
AS_JSON_TEXT = b"""
calls: {where: "ev == 'model'", response: from_json(body), model: from_json(body).model}
messages: {text: say, tool_calls: calls}
tool_calls: {id: id, name: tool, arguments: input}
tool_results: {where: "ev == 'result'", id: from_json(body).id, content: from_json(body).output}
usage: {input_tokens: from_json(body).tin, output_tokens: from_json(body).tout}
"""
TEXT = rb"""
lines:
  pattern: >-
    ^(?P<ev>model|result) (?P<id>\S+) (?P<tool>\S+)(?: (?P<tin>\d+) (?P<tout>\d+))? :: (?P<text>.*)$
calls: {where: "ev == 'model'", response: "@"}
messages: {text: text, tool_calls: "[{id: id, name: tool}]"}
tool_calls: {id: id, name: name}
tool_results: {where: "ev == 'result'", id: id, name: tool, content: text}
usage: {input_tokens: to_number(tin), output_tokens: to_number(tout)}
"""
DEDUPE = b"dedupe: run\n" + BASE
NO_IDS = b"""
calls: {where: "ev == 'model'", response: "@", model: model}
messages: {text: say, tool_calls: calls}
tool_calls: {name: tool, arguments: input}
tool_results: {where: "ev == 'result'", name: tool, content: output}
usage: {input_tokens: tin, output_tokens: tout}
"""


BASELINE = "baseline (JSONL, ids)"


def records(calls: int) -> list[tuple[dict, dict]]:
    """(model record, result record) per call of the generated loop."""
    pairs = []
    for n in range(calls):
        tool = ("grep", "read", "edit")[n % 3]
        call = {"id": f"c{n}", "tool": tool, "input": {"path": f"src/m{n}.py"}}
        say = f"Step {n}: looking at src/m{n}.py for the failing assertion."
        model = {"ev": "model", "model": "m-1", "say": say, "calls": [call], "tin": 900, "tout": 40}
        result = {"ev": "result", "id": f"c{n}", "tool": tool, "output": f"{n} lines " * 8}
        pairs.append((model, result))
    return pairs


def text_of(value: dict) -> str:
    return orjson.dumps(value).decode()


def jsonl(rows: list[dict]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def logs(calls: int) -> dict[str, tuple[bytes, bytes]]:
    """Each way of writing the loop: (log, mapping)."""
    pairs = records(calls)
    flat = [r for pair in pairs for r in pair]
    as_text = [
        {
            "ev": r["ev"],
            "say": r.get("say"),
            "calls": r.get("calls"),
            "body": orjson.dumps(r).decode(),
        }
        for r in flat
    ]
    lines = []
    for model, result in pairs:
        call = model["calls"][0]
        lines.append(f"model {call['id']} {call['tool']} 900 40 :: {model['say']}")
        lines.append(f"result {result['id']} {result['tool']} :: {result['output']}")
    twice = [
        {**r, "run": f"{i}", "status": status}
        for i, r in enumerate(flat)
        for status in ("started", "done")
    ]
    no_ids = [
        {k: v for k, v in r.items() if k != "id"}
        | (
            {"calls": [{k: v for k, v in r["calls"][0].items() if k != "id"}]}
            if "calls" in r
            else {}
        )
        for r in flat
    ]
    return {
        BASELINE: (jsonl(flat), BASE),
        "from_json (payload as JSON text)": (jsonl(as_text), AS_JSON_TEXT),
        "lines.pattern (text log)": ("\n".join(lines).encode() + b"\n", TEXT),
        "dedupe (each record twice)": (jsonl(twice), DEDUPE),
        "no ids (order and name)": (jsonl(no_ids), NO_IDS),
    }


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    written = logs(options.calls)
    specs = {name: load_mapping(mapping, "bench.yaml") for name, (_, mapping) in written.items()}
    for name, (log, _) in written.items():
        trace = analyze_bytes(log, filename="bench.log", mapping=specs[name])
        assert len(trace.calls) == options.calls, (name, len(trace.calls))
        paired = sum(r.status == "paired" for r in trace.tool_runs)
        assert paired == options.calls, (name, paired)
    base_log = written[BASELINE][0]
    best = dict.fromkeys(written, float("inf"))
    parse = float("inf")
    for _ in range(options.repeat):  # round robin, so a busy moment hits every variant
        parse = min(parse, timed(lambda: [orjson.loads(line) for line in base_log.splitlines()]))
        for name, (log, _) in written.items():
            spec = specs[name]
            best[name] = min(best[name], timed(lambda: analyze_bytes(log, mapping=spec)))  # noqa: B023
    print(f"{options.calls:,} calls, {2 * options.calls:,} records; best of {options.repeat}")
    print(f"  bare orjson parse of the baseline: {parse * 1000:8.1f} ms")
    for name, (log, _) in written.items():
        seconds = best[name]
        print(
            f"  {name:34} {seconds * 1000:8.1f} ms  {2 * options.calls / seconds:8,.0f} rec/s  "
            f"x{seconds / best[BASELINE]:5.2f} baseline  ({len(log) / 1e6:.1f} MB)"
        )


if __name__ == "__main__":
    main()
