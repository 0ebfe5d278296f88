"""Trace file to self-contained HTML: Loop Inspector against claude-trace, same file, same run.

Generates a claude-trace style log of Anthropic request/response pairs (default 2,000
pairs: 100 agent loops of 20 calls, each request re-sending its transcript), then times

- `loop-inspector report FILE --html OUT` (the console script: the core alone, no Django),
- `manage.py report FILE --html OUT` (handed to the same code, without setting up Django),
- `claude-trace --generate-html FILE OUT --no-open` (@mariozechner/claude-trace, installed
  with npm into a temporary folder) when npm is present,

each as a fresh process (start-up included, as a user runs it), best of --repeat, and
prints the times and the ratio ours / claude-trace (target <= 1). Without npm it prints
ours alone.

    .venv/bin/python bench/peers.py [--pairs 2000] [--per-loop 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import make_log  # noqa: E402  (bench/ingest.py: the same generated log shape)

CLAUDE_TRACE = "@mariozechner/claude-trace@1.0.9"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""Children may cache bytecode, as an installed package has it compiled at install time."""


def make_pairs(pairs: int, per_loop: int, result_bytes: int) -> bytes:
    """`pairs` request/response lines in loops of `per_loop` calls each."""
    chunks = []
    left, seed = pairs, 1
    while left > 0:
        size = min(per_loop, left)
        chunks.append(make_log(size, result_bytes, seed=seed))
        left -= size
        seed += 1
    return b"".join(chunks)


def best_of(command: list[str], repeat: int, cwd: Path) -> tuple[float, float]:
    """(best wall time, CPU time of that run) of `command` as a fresh process.

    CPU time (user + system of the child) is printed too: on a shared, loaded machine it
    says what the work costs when wall time also counts waiting for a core.
    """
    best: tuple[float, float] | None = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(command, cwd=cwd, capture_output=True, env=ENV)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if result.returncode != 0:
            sys.exit(
                f"{' '.join(command)} failed ({result.returncode}):\n"
                f"{result.stdout.decode(errors='replace')[-2000:]}\n"
                f"{result.stderr.decode(errors='replace')[-2000:]}"
            )
        if best is None or wall < best[0]:
            best = (wall, cpu)
    assert best is not None
    return best


def line(label: str, timing: tuple[float, float], output: Path | None = None) -> None:
    size = f"  {output.stat().st_size / 1e6:5.1f} MB of HTML" if output else ""
    print(f"{label:<32} {timing[0]:6.2f} s wall  {timing[1]:6.2f} s CPU{size}")


def install_claude_trace(folder: Path) -> Path | None:
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None
    result = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", folder, CLAUDE_TRACE],
        capture_output=True,
        timeout=600,
    )
    cli = folder / "node_modules" / "@mariozechner" / "claude-trace" / "dist" / "cli.js"
    if result.returncode != 0 or not cli.exists():
        print(f"npm could not install {CLAUDE_TRACE}: {result.stderr.decode()[-500:]}")
        return None
    return cli


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--per-loop", type=int, default=20)
    parser.add_argument("--result-bytes", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    python = Path(sys.executable)
    script = python.parent / "loop-inspector"
    with tempfile.TemporaryDirectory(prefix="loop-inspector-peers-") as tmp:
        work = Path(tmp)
        log = work / "log-pairs.jsonl"
        log.write_bytes(make_pairs(options.pairs, options.per_loop, options.result_bytes))
        size = log.stat().st_size
        print(f"{options.pairs} Anthropic pairs ({options.per_loop} per loop), {size / 1e6:.1f} MB")

        script_cmd = [str(script)] if script.exists() else [str(python), "-m", "inspector.cli"]
        ours = best_of(
            [*script_cmd, "report", str(log), "--html", str(work / "ours.html")],
            options.repeat,
            work,
        )
        manage = best_of(
            [
                str(python),
                str(ROOT / "manage.py"),
                "report",
                str(log),
                "--html",
                str(work / "m.html"),
            ],
            options.repeat,
            work,
        )
        line("loop-inspector report --html", ours, work / "ours.html")
        line("manage.py report --html", manage, work / "m.html")

        cli = install_claude_trace(work / "npm")
        if cli is None:
            print("claude-trace: npm absent (or the install failed); ours alone above")
            return
        theirs = best_of(
            ["node", str(cli), "--generate-html", str(log), str(work / "theirs.html"), "--no-open"],
            options.repeat,
            work,
        )
        line("claude-trace --generate-html", theirs, work / "theirs.html")
        print(
            f"ratio ours / claude-trace: {ours[0] / theirs[0]:.2f} wall, "
            f"{ours[1] / theirs[1]:.2f} CPU  (target <= 1)"
        )
        print(f"ratio manage.py / claude-trace: {manage[0] / theirs[0]:.2f} wall")


if __name__ == "__main__":
    main()
