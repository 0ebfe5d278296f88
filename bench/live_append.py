"""Live append cost: what one appended line costs the server, from the POST's handler on.

Plays an agent's log into a live trace the way a tail does, `--batch` lines per
`append_lines` (1: every line on its own, as a recorder writing line by line sends them),
in-process on a fresh SQLite file, and prints the time per appended line: the whole
append (lock, original chunk, adapter, rows, events, trace row), as wall time and as
this process's CPU time (on a shared machine the CPU time is the steadier figure), and,
apart, the CPU time of the part that stores the new rows and makes the viewers' events
(`traces.live.events.store_changes`: the part that rendered each new call's HTML row
before live events became data).

The report refresh that follows each append is a separate queue task (traces.live.worker),
measured by bench/live.py's latencies; it is left out here (not queued), so the figures
are the append's own. Two logs: Loop Inspector's own event lines of a generated 200-call
loop (tests/live/events.py), and, when the public corpus is beside the checkout, a real
Claude Code session with its subagent (two loops, 17 calls), their lines interleaved by
time as one log.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/live_append.py [--batch 1]
        [--calls 200] [--repeat 3] [--corpus ../shared/corpus]

PYTHONPYCACHEPREFIX keeps the bytecode of the run out of the checkout and the shared venv.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import setup_django  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
SESSION = Path("claude_code_jsonl") / "codemie_incremental-subagents"


def corpus_lines(corpus: Path) -> list[bytes] | None:
    """The Claude Code session and its subagent, interleaved by time (as in
    tests/live/test_held_messages.py); None without the corpus."""
    import orjson

    session = corpus / SESSION / "turn-2.jsonl"
    subagent = corpus / SESSION / "turn-2" / "subagents" / "agent-a485154.jsonl"
    if not session.is_file() or not subagent.is_file():
        return None
    raw = session.read_bytes().splitlines() + subagent.read_bytes().splitlines()
    keyed = [
        (orjson.loads(line).get("timestamp") or "", order, line) for order, line in enumerate(raw)
    ]
    keyed.sort(key=lambda item: (item[0], item[1]) if item[0] else ("", item[1]))
    return [line for _, _, line in keyed]


def timed(spent: list[float], function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, adding the CPU seconds of each call to `spent`."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent.append(time.process_time() - started)

    return wrapper


def play(lines: list[bytes], batch: int, changes: list[float]) -> tuple[float, float, int]:
    """Append `lines` to a new live trace, `batch` at a time; (wall seconds, CPU seconds,
    calls stored)."""
    from traces import live

    trace = live.create_live_trace(name="bench")
    del changes[:]
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(lines), batch):
        live.append_lines(trace_id=trace.pk, offset=start, lines=lines[start : start + batch])
    spent, cpu = time.perf_counter() - started, time.process_time() - cpu
    trace.refresh_from_db()
    live.forget_sessions()
    return spent, cpu, trace.calls_count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the public corpus")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        setup_django(str(Path(folder) / "bench.sqlite3"))
        from tests.live.events import agent_lines
        from traces.live import events, writes

        # The report refresh is the worker's task, measured apart (see the docstring).
        writes.request_refresh = lambda trace_id: None  # type: ignore[assignment]
        writes.request_refresh_of_new = lambda trace_id: None  # type: ignore[assignment]
        changes: list[float] = []
        writes.store_changes = timed(changes, events.store_changes)  # type: ignore[assignment]
        logs = {f"generated, {args.calls} calls": agent_lines(args.calls)}
        if (real := corpus_lines(args.corpus)) is not None:
            logs["Claude Code + subagent (corpus)"] = real
        for name, lines in logs.items():
            walls, cpus, stores = [], [], []
            calls = 0
            for _ in range(args.repeat):
                wall, cpu, calls = play(lines, args.batch, changes)
                walls.append(wall)
                cpus.append(cpu)
                stores.append(sum(changes))

            def per(values: list[float], count: int) -> float:
                return statistics.median(values) / max(count, 1) * 1000

            print(f"{name}: {len(lines)} lines, {calls} calls, batches of {args.batch}")
            print(f"  append, per line, wall:           {per(walls, len(lines)):7.3f} ms")
            print(f"  append, per line, CPU:            {per(cpus, len(lines)):7.3f} ms")
            print(f"  of which rows + events, per line: {per(stores, len(lines)):7.3f} ms CPU")
            print(f"  rows + events, per call:          {per(stores, calls):7.3f} ms CPU")
        print(f"(medians of {args.repeat} runs)")


if __name__ == "__main__":
    main()
