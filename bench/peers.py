"""Trace file to self-contained HTML: Loop Inspector against claude-trace, same file, same run.

Generates a claude-trace style log of Anthropic request/response pairs at each size of
--pairs (agent loops of 20 calls, each request re-sending its transcript), then times

- `loop-inspector report FILE --html OUT` (the console script: the core alone, no Django),
- `manage.py report FILE --html OUT` (handed to the same code, without setting up Django),
- `claude-trace --generate-html FILE OUT --no-open` (@mariozechner/claude-trace, installed
  with npm into a temporary folder) when npm is present,

each as a fresh process (start-up included, as a user runs it), at every size of --pairs
(default 200 and 2,000), the commands taking turns --repeat times (the median of each,
wall and CPU), and prints the times and the ratios to claude-trace (target <= 1). Without
npm it prints ours alone. Ours is timed with its price memo warm (a later report of the
same model) and off (the first one). `--before DIR` also runs the console script from
another source tree (e.g. `git worktree add /tmp/before main`) in the same turns, for a
before/after in one run. The load average is printed before and after: the machine may
be shared. Set PYTHONPYCACHEPREFIX to a cache folder so our processes run on cached
bytecode, as an installed package does.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/peers.py [--pairs 200,2000]
        [--repeat 5] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
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


def source_env(tree: Path) -> dict[str, str]:
    """The environment that runs the console script on the sources of `tree` (PYTHONPATH
    goes before the editable install's finder, whichever checkout that one points at)."""
    return {**ENV, "PYTHONPATH": str(tree)}


def run_once(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall time, CPU time) of `command` as a fresh process in `env`.

    CPU time (user + system of the child) is printed too: on a shared, loaded machine it
    says what the work costs when wall time also counts waiting for a core.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, env=env)
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


def interleaved(
    commands: dict[str, tuple[list[str], dict[str, str]]], repeat: int, cwd: Path
) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) of each command, the commands taking turns `repeat` times so a
    burst of load on the shared machine falls on all of them alike."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, (command, env) in commands.items():
            wall, cpu = run_once(command, cwd, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {
        name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in commands
    }


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


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
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None, help="a source tree to compare")
    options = parser.parse_args()
    python = Path(sys.executable)
    script = python.parent / "loop-inspector"
    script_cmd = [str(script)] if script.exists() else [str(python), "-m", "inspector.cli"]
    cache = os.environ.get("PYTHONPYCACHEPREFIX")
    print(f"bytecode cache: {cache or '__pycache__ next to the sources'} (children write it)")
    print(f"before: {load()}")
    with tempfile.TemporaryDirectory(prefix="loop-inspector-peers-") as tmp:
        work = Path(tmp)
        # Ours prices from its memo of genai-prices' answers (warmed by one untimed run
        # at each size), as every report after the first does; "memo off" is a first run.
        ours_env = {**source_env(ROOT), "LOOP_INSPECTOR_CACHE_DIR": str(work / "price-memo")}
        cold_env = {**source_env(ROOT), "LOOP_INSPECTOR_CACHE_DIR": ""}
        memo_env = {**ENV, "LOOP_INSPECTOR_CACHE_DIR": str(work / "price-memo")}
        cli = install_claude_trace(work / "npm")
        if cli is None:
            print("claude-trace: npm absent (or the install failed); ours alone below")
        for pairs in (int(size) for size in options.pairs.split(",")):
            log = work / f"log-{pairs}.jsonl"
            log.write_bytes(make_pairs(pairs, options.per_loop, options.result_bytes))
            size = log.stat().st_size
            print(f"\n{pairs} Anthropic pairs ({options.per_loop} per loop), {size / 1e6:.1f} MB")
            names = ("ours", "cold", "before", "m", "theirs")
            outputs = {name: work / f"{name}-{pairs}.html" for name in names}
            report = ["report", str(log), "--html"]
            commands = {
                "ours": ([*script_cmd, *report, str(outputs["ours"])], ours_env),
                "cold": ([*script_cmd, *report, str(outputs["cold"])], cold_env),
                "m": ([str(python), str(ROOT / "manage.py"), *report, str(outputs["m"])], memo_env),
            }
            if options.before is not None:
                before_cmd = [*script_cmd, *report, str(outputs["before"])]
                commands["before"] = (before_cmd, source_env(options.before.resolve()))
            if cli is not None:
                theirs_cmd = ["node", str(cli), "--generate-html", str(log)]
                commands["theirs"] = ([*theirs_cmd, str(outputs["theirs"]), "--no-open"], ENV)
            run_once(commands["ours"][0], work, commands["ours"][1])  # the memo learns the model
            timed = interleaved(commands, options.repeat, work)
            line("loop-inspector report --html", timed["ours"], outputs["ours"])
            line("  the same, price memo off", timed["cold"], outputs["cold"])
            if "before" in timed:
                line("  the same, --before tree", timed["before"], outputs["before"])
            line("manage.py report --html", timed["m"], outputs["m"])
            if cli is None:
                continue
            theirs = timed["theirs"]
            line("claude-trace --generate-html", theirs, outputs["theirs"])
            if "before" in timed:
                same = outputs["ours"].read_bytes() == outputs["before"].read_bytes()
                print(f"ours and --before wrote {'the same' if same else 'DIFFERENT'} HTML")
            labels = (("ours", "ours"), ("cold", "memo off"), ("before", "before"))
            for name, label in (*labels, ("m", "manage.py")):
                if name in timed:
                    print(
                        f"ratio {label} / claude-trace at {pairs} pairs: "
                        f"{timed[name][0] / theirs[0]:.2f} wall, "
                        f"{timed[name][1] / theirs[1]:.2f} CPU  (target <= 1)"
                    )
    print(f"\nafter: {load()}")


if __name__ == "__main__":
    main()
