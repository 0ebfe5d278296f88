"""Trace file to self-contained HTML: Loop Inspector against claude-trace, same file, same run.

Generates a claude-trace style log of Anthropic request/response pairs at each size of
--pairs (agent loops of 20 calls, each request re-sending its transcript), then times

- `loop-inspector report FILE --html OUT` (the console script: the core alone, no Django),
- `manage.py report FILE --html OUT` (handed to the same code, without setting up Django),
- `claude-trace --generate-html FILE OUT --no-open` (@mariozechner/claude-trace, installed
  with npm into a temporary folder) when npm is present,

each as a fresh process (start-up included, as a user runs it), at every size of --pairs
(default 200 and 2,000), the commands taking turns --repeat times (best of each), and
prints the times and the ratio ours / claude-trace (target <= 1). Without npm it prints
ours alone. Set PYTHONPYCACHEPREFIX to a cache folder so our processes run on cached
bytecode, as an installed package does.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/peers.py [--pairs 200,2000]
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


def run_once(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall time, CPU time) of `command` as a fresh process.

    CPU time (user + system of the child) is printed too: on a shared, loaded machine it
    says what the work costs when wall time also counts waiting for a core.
    """
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
    return wall, cpu


def interleaved(commands: dict[str, list[str]], repeat: int, cwd: Path) -> dict[str, tuple]:
    """Best (wall, CPU) of each command, the commands taking turns `repeat` times so a
    burst of load on the shared machine falls on all of them alike."""
    best: dict[str, tuple[float, float]] = {}
    for _ in range(repeat):
        for name, command in commands.items():
            timing = run_once(command, cwd)
            if name not in best or timing[0] < best[name][0]:
                best[name] = timing
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
    parser.add_argument(
        "--pairs", default="200,2000", help="comma-separated sizes (default 200,2000)"
    )
    parser.add_argument("--per-loop", type=int, default=20)
    parser.add_argument("--result-bytes", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    python = Path(sys.executable)
    script = python.parent / "loop-inspector"
    script_cmd = [str(script)] if script.exists() else [str(python), "-m", "inspector.cli"]
    cache = os.environ.get("PYTHONPYCACHEPREFIX")
    print(f"bytecode cache: {cache or '__pycache__ next to the sources'} (children write it)")
    with tempfile.TemporaryDirectory(prefix="loop-inspector-peers-") as tmp:
        work = Path(tmp)
        cli = install_claude_trace(work / "npm")
        if cli is None:
            print("claude-trace: npm absent (or the install failed); ours alone below")
        for pairs in (int(size) for size in options.pairs.split(",")):
            log = work / f"log-{pairs}.jsonl"
            log.write_bytes(make_pairs(pairs, options.per_loop, options.result_bytes))
            size = log.stat().st_size
            print(f"\n{pairs} Anthropic pairs ({options.per_loop} per loop), {size / 1e6:.1f} MB")
            outputs = {name: work / f"{name}-{pairs}.html" for name in ("ours", "m", "theirs")}
            commands = {
                "ours": [*script_cmd, "report", str(log), "--html", str(outputs["ours"])],
                "m": [
                    str(python),
                    str(ROOT / "manage.py"),
                    "report",
                    str(log),
                    "--html",
                    str(outputs["m"]),
                ],
            }
            if cli is not None:
                commands["theirs"] = [
                    "node",
                    str(cli),
                    "--generate-html",
                    str(log),
                    str(outputs["theirs"]),
                    "--no-open",
                ]
            best = interleaved(commands, options.repeat, work)
            line("loop-inspector report --html", best["ours"], outputs["ours"])
            line("manage.py report --html", best["m"], outputs["m"])
            if cli is None:
                continue
            ours, theirs = best["ours"], best["theirs"]
            line("claude-trace --generate-html", theirs, outputs["theirs"])
            print(
                f"ratio ours / claude-trace at {pairs} pairs: {ours[0] / theirs[0]:.2f} wall, "
                f"{ours[1] / theirs[1]:.2f} CPU  (target <= 1)"
            )
            print(f"ratio manage.py / claude-trace: {best['m'][0] / theirs[0]:.2f} wall")


if __name__ == "__main__":
    main()
